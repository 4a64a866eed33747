/**
 * ajv's errors as the issues people read: the JSON path, what is wrong and what is allowed, one
 * issue per mistake, and never a value of the payload.
 */
import { describe, expect, it } from 'vitest';
import { formatIssue } from '../../lib/contract/json-schema.ts';
import { compileSchema } from '../../lib/contract/schema-compiler.ts';
import { messagePath } from '../../lib/model/index.ts';

const messages = (schema: object, value: unknown) =>
  compileSchema(schema).validate(value).map(formatIssue);

describe('compileSchema', () => {
  it('refuses keywords ajv strict mode does not know instead of ignoring them', () => {
    expect(() => compileSchema({ type: 'string', notAKeyword: 1 })).toThrow(/unknown keyword/);
  });

  it('refuses a $ref to a missing definition and an invalid pattern', () => {
    expect(() => compileSchema({ $ref: '#/definitions/Nope' })).toThrow(/names no #\/definitions/);
    expect(() => compileSchema({ type: 'string', pattern: '(' })).toThrow(/pattern|Invalid/i);
  });

  it('ignores annotations', () => {
    expect(messages({ title: 't', description: 'd', $comment: 'c', type: 'string' }, 'x')).toEqual(
      [],
    );
  });
});

describe('validation', () => {
  it('names the JSON path of each issue', () => {
    const schema = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: {
            type: 'object',
            properties: { key: { type: 'object', properties: { name: { type: 'string' } } } },
          },
        },
      },
    };
    expect(messages(schema, { items: [{}, {}, {}, { key: { name: 3 } }] })).toEqual([
      'items[3].key.name: must be a string',
    ]);
  });

  it('reports type, required, additionalProperties, enum, const, lengths, pattern, minimum', () => {
    const schema = {
      type: 'object',
      required: ['a', 'b'],
      additionalProperties: false,
      properties: {
        a: { const: 1 },
        b: { enum: ['x', 'y'] },
        c: { type: 'string', minLength: 1 },
        d: { type: 'string', pattern: '^[a-z]+$' },
        e: { type: 'number', minimum: 0 },
        f: { type: 'array', minItems: 1, maxItems: 2 },
        g: { type: 'integer' },
        h: { type: 'string', maxLength: 2 },
      },
    };
    const value = { a: 2, c: '', d: 'A', e: -1, f: [1, 2, 3], g: 1.5, h: 'abc', z: true };
    expect(messages(schema, value).sort()).toEqual(
      [
        'b: is required',
        'a: must be 1',
        'c: must not be empty',
        'd: must match ^[a-z]+$',
        'e: must be >= 0',
        'f: must have at most 2 items (got 3)',
        'g: must be an integer',
        'h: must be at most 2 characters long',
        'z: is not allowed here (allowed: a, b, c, d, e, f, g, h)',
      ].sort(),
    );
    expect(messages(schema, { a: 1, b: 'q' })).toEqual(['b: must be one of "x", "y"']);
    expect(messages(schema, [])).toEqual(['(root): must be an object']);
  });

  it('counts characters, not UTF-16 units, for string lengths', () => {
    expect(messages({ type: 'string', maxLength: 2 }, '😀😀')).toEqual([]);
  });

  it('never echoes a value of the payload', () => {
    const secret = 'hunter2-SECRET';
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: {
        a: { const: 'x' },
        b: { enum: ['x', 'y'] },
        c: { type: 'string', pattern: '^[a-z]+$' },
        d: { type: 'number', minimum: 100 },
        e: { oneOf: [{ const: 'p' }, { const: 'q' }] },
      },
    };
    const text = messages(schema, { a: secret, b: secret, c: secret, d: 31337, e: secret }).join(
      '\n',
    );
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('31337');
    expect(text).toContain('c: must match ^[a-z]+$');
  });

  it('validates additional properties against a schema when one is given', () => {
    const schema = { type: 'object', additionalProperties: { type: 'string' } };
    expect(messages(schema, { a: 'x', 'b.c': 1 })).toEqual(['["b.c"]: must be a string']);
  });

  it('tells an array index from a key of digits', () => {
    const schema = {
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'string' } },
        map: { type: 'object', additionalProperties: { type: 'string' } },
      },
    };
    expect(messages(schema, { list: [1], map: { '0': 1, 'a/b': 2 } })).toEqual([
      'list[0]: must be a string',
      'map["0"]: must be a string',
      'map["a/b"]: must be a string',
    ]);
  });

  it('merges type mismatches of alternatives', () => {
    const schema = {
      definitions: {
        Obj: { type: 'object', required: ['metadata'], properties: { metadata: {} } },
      },
      oneOf: [{ type: 'null' }, { $ref: '#/definitions/Obj' }],
    };
    expect(messages(schema, 'x')).toEqual(['(root): must be null or an object']);
    expect(messages(schema, null)).toEqual([]);
    expect(messages(schema, {})).toEqual(['metadata: is required']);
  });

  it('reports the discriminator, or the branch the value meant, when no alternative matches', () => {
    const schema = {
      definitions: {
        A: {
          type: 'object',
          required: ['kind', 'a'],
          properties: { kind: { const: 'A' }, a: { type: 'string' } },
        },
      },
      type: 'object',
      properties: {
        list: {
          type: 'array',
          items: {
            oneOf: [
              { $ref: '#/definitions/A' },
              {
                type: 'object',
                required: ['kind', 'b'],
                properties: { kind: { const: 'B' }, b: { type: 'number' } },
              },
            ],
          },
        },
      },
    };
    const one = (item: unknown) => messages(schema, { list: [item] });
    expect(one({ kind: 'C' })).toEqual(['list[0].kind: must be one of "A", "B"']);
    expect(one({ kind: 'B', b: 'no' })).toEqual(['list[0].b: must be a number']);
    expect(one({ kind: 'A', a: 1 })).toEqual(['list[0].a: must be a string']);
    expect(one({ kind: 'A', a: 'ok' })).toEqual([]);
    expect(messages(schema, { list: [{ kind: 'A', a: 1 }, 3] })).toEqual([
      'list[0].a: must be a string',
      'list[1]: must be an object',
    ]);
  });

  it('summarises nested alternatives inside a branch', () => {
    const schema = {
      anyOf: [
        { type: 'string' },
        {
          type: 'object',
          required: ['x'],
          properties: { x: { oneOf: [{ type: 'null' }, { type: 'integer' }] } },
        },
      ],
    };
    expect(messages(schema, { x: 'no' })).toEqual(['x: must be null or an integer']);
    expect(messages(schema, 1)).toEqual(['(root): must be a string or an object']);
  });

  it('reports a oneOf that matches more than one alternative', () => {
    const schema = { type: 'string', oneOf: [{ minLength: 1 }, { maxLength: 3 }] };
    expect(messages(schema, 'x')).toEqual([
      '(root): must match exactly one alternative (matched 2)',
    ]);
    expect(messages({ type: 'string', anyOf: [{ minLength: 1 }, { maxLength: 3 }] }, 'x')).toEqual(
      [],
    );
  });
});

describe('messagePath (the paths of issues)', () => {
  it('uses dots for identifiers, brackets for indices and quoted keys', () => {
    expect(messagePath(['items', 3, 'key', 'name'])).toBe('items[3].key.name');
    expect(messagePath(['metadata', 'annotations', 'a.b/c'])).toBe('metadata.annotations["a.b/c"]');
    expect(messagePath([])).toBe('');
  });

  it('escapes a key that could break a log line and cuts a long one short', () => {
    expect(messagePath(['labels', 'a\nb'])).toBe('labels["a\\nb"]');
    const long = messagePath(['labels', 'k'.repeat(500)]);
    expect(long.length).toBeLessThan(80);
    expect(long.endsWith('...]')).toBe(true);
  });

  it('is the path the configuration loader gives its nodes', async () => {
    const { parseConfig } = await import('../../lib/config/index.ts');
    const { diagnostics } = parseConfig(
      'sync:\n  toHost:\n    endpoints:\n      patches:\n        - {}\n',
      'c.yaml',
    );
    expect(diagnostics.map((d) => d.configPath)).toContain(
      messagePath(['sync', 'toHost', 'endpoints', 'patches', 0]),
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  compileSchema,
  formatIssue,
  formatPath,
  SchemaDefinitionError,
} from '../../lib/contract/json-schema.ts';

const messages = (schema: unknown, value: unknown) =>
  compileSchema(schema).validate(value).map(formatIssue);

describe('compileSchema', () => {
  it('rejects keywords outside the supported subset instead of ignoring them', () => {
    expect(() => compileSchema({ type: 'string', format: 'uri' })).toThrow(SchemaDefinitionError);
    expect(() => compileSchema({ type: 'string', format: 'uri' })).toThrow(/keyword "format"/);
  });

  it('rejects a $ref to a missing definition and non-local refs', () => {
    expect(() => compileSchema({ $ref: '#/definitions/Nope' })).toThrow(
      /unknown definition "Nope"/,
    );
    expect(() => compileSchema({ $ref: 'http://x/y.json' })).toThrow(/only "#\/definitions/);
  });

  it('rejects invalid patterns and unknown types', () => {
    expect(() => compileSchema({ pattern: '(' })).toThrow(/invalid pattern/);
    expect(() => compileSchema({ type: 'float' })).toThrow(/unknown type "float"/);
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
      },
    };
    expect(messages(schema, { a: 2, c: '', d: 'A', e: -1, f: [1, 2, 3], g: 1.5, z: true })).toEqual(
      [
        'b: is required',
        'a: must be 1 (got 2)',
        'c: must not be empty',
        'd: must match ^[a-z]+$ (got "A")',
        'e: must be >= 0 (got -1)',
        'f: must have at most 2 items (got 3)',
        'g: must be an integer',
        'z: is not allowed here (allowed: a, b, c, d, e, f, g)',
      ],
    );
    expect(messages(schema, { a: 1, b: 'q' })).toEqual(['b: must be one of "x", "y" (got "q")']);
    expect(messages(schema, [])).toEqual(['(root): must be an object']);
  });

  it('validates additional properties against a schema when one is given', () => {
    const schema = { type: 'object', additionalProperties: { type: 'string' } };
    expect(messages(schema, { a: 'x', 'b.c': 1 })).toEqual(['["b.c"]: must be a string']);
  });

  it('merges type mismatches of alternatives', () => {
    const schema = {
      definitions: { Obj: { type: 'object', required: ['metadata'] } },
      oneOf: [{ type: 'null' }, { $ref: '#/definitions/Obj' }],
    };
    expect(messages(schema, 'x')).toEqual(['(root): must be null or an object']);
    expect(messages(schema, null)).toEqual([]);
    expect(messages(schema, {})).toEqual(['metadata: is required']);
  });

  it('reports the discriminator, or the branch the value meant, when no alternative matches', () => {
    const schema = {
      oneOf: [
        {
          type: 'object',
          required: ['kind', 'a'],
          properties: { kind: { const: 'A' }, a: { type: 'string' } },
        },
        {
          type: 'object',
          required: ['kind', 'b'],
          properties: { kind: { const: 'B' }, b: { type: 'number' } },
        },
      ],
    };
    expect(messages(schema, { kind: 'C' })).toEqual(['kind: must be one of "A", "B" (got "C")']);
    expect(messages(schema, { kind: 'B', b: 'no' })).toEqual(['b: must be a number']);
    expect(messages(schema, { kind: 'A', a: 'ok' })).toEqual([]);
  });

  it('reports a oneOf that matches more than one alternative', () => {
    expect(messages({ oneOf: [{ type: 'string' }, { minLength: 1 }] }, 'x')).toEqual([
      '(root): must match exactly one alternative (matched 2)',
    ]);
    expect(messages({ anyOf: [{ type: 'string' }, { minLength: 1 }] }, 'x')).toEqual([]);
  });

  it('validates against a named definition', () => {
    const validator = compileSchema({ definitions: { S: { type: 'string' } }, type: 'object' });
    expect(validator.validate(1, 'S').map(formatIssue)).toEqual(['(root): must be a string']);
    expect(() => validator.validate(1, 'Nope')).toThrow(SchemaDefinitionError);
  });
});

describe('formatPath', () => {
  it('uses dots for identifiers, brackets for indices and quoted keys', () => {
    expect(formatPath(['items', 3, 'key', 'name'])).toBe('items[3].key.name');
    expect(formatPath(['metadata', 'annotations', 'a.b/c'])).toBe('metadata.annotations["a.b/c"]');
    expect(formatPath([])).toBe('');
  });
});

import { describe, expect, it } from 'vitest';
import {
  deleteAt,
  formatLocation,
  formatPath,
  getAt,
  matchPath,
  PathAccessError,
  PathSyntaxError,
  parsePath,
  setAt,
} from '../../lib/patches/path.ts';

const key = (k: string) => ({ kind: 'key', key: k }) as const;
const index = (i: number) => ({ kind: 'index', index: i }) as const;
const wildcard = { kind: 'wildcard' } as const;

describe('parsePath', () => {
  it.each([
    ['', []],
    ['metadata', [key('metadata')]],
    ['metadata.annotations[*]', [key('metadata'), key('annotations'), wildcard]],
    ['metadata.annotations.*', [key('metadata'), key('annotations'), wildcard]],
    ['metadata.annotations["a.b/c"]', [key('metadata'), key('annotations'), key('a.b/c')]],
    ['metadata.annotations[a.b/c]', [key('metadata'), key('annotations'), key('a.b/c')]],
    ['metadata."a.b".c', [key('metadata'), key('a.b'), key('c')]],
    ['spec.containers[*].name', [key('spec'), key('containers'), wildcard, key('name')]],
    [
      'spec.containers[*].volumeMounts[*]',
      [key('spec'), key('containers'), wildcard, key('volumeMounts'), wildcard],
    ],
    [
      'subsets[0].addresses.1.ip',
      [key('subsets'), index(0), key('addresses'), index(1), key('ip')],
    ],
    ['data["0"]', [key('data'), key('0')]],
    ['data["*"]', [key('data'), key('*')]],
    ['data[01]', [key('data'), key('01')]],
    ['data[-1]', [key('data'), key('-1')]],
    ["data['a']", [key('data'), key("'a'")]],
    ['data["say \\"hi\\""]', [key('data'), key('say "hi"')]],
    ['data["back\\\\slash"]', [key('data'), key('back\\slash')]],
    ['data["a\\nb"]', [key('data'), key('a\\nb')]],
    ['data[""]', [key('data'), key('')]],
    ['[*][*]', [wildcard, wildcard]],
    ['["a"]["b"]', [key('a'), key('b')]],
    ['a b.c d', [key('a b'), key('c d')]],
  ])('reads %j', (source, expected) => {
    expect(parsePath(source)).toEqual(expected);
  });

  it.each([
    ['a..b', 3, 'empty segment'],
    ['.a', 1, 'empty segment'],
    ['a.', 2, 'empty segment'],
    ['a.[0]', 3, 'empty segment'],
    ['a[', 2, 'unclosed "["'],
    ['a[0', 2, 'unclosed "["'],
    ['a["x"', 2, 'unclosed "["'],
    ['a[]', 2, 'empty "[]"'],
    ['a]', 2, '"]" without a matching "["'],
    [']', 1, '"]" without a matching "["'],
    ['a[0]]', 5, '"]" without a matching "["'],
    ['a["b', 3, 'unclosed quote'],
    ['"a', 1, 'unclosed quote'],
    ['a["b\\"]', 3, 'unclosed quote'],
    ['a[0]b', 5, 'expected'],
    ['a"b', 2, 'a quote inside a key'],
    ['a[b"c]', 4, 'a quote inside a bracketed key'],
    ['a[b[c]]', 4, 'inside brackets'],
    ['"a"b', 4, 'expected'],
    ['a["b"c]', 6, 'expected "]"'],
  ])('rejects %j at column %i (%s)', (source, column, reason) => {
    let error: unknown;
    try {
      parsePath(source);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PathSyntaxError);
    const syntax = error as PathSyntaxError;
    expect(syntax.column).toBe(column);
    expect(syntax.source).toBe(source);
    expect(syntax.reason).toContain(reason);
    expect(syntax.message).toContain(`at column ${column}`);
  });
});

describe('formatPath', () => {
  it.each([
    ['metadata.annotations.*', 'metadata.annotations[*]'],
    ['metadata.annotations[a.b]', 'metadata.annotations["a.b"]'],
    ['a[b]', 'a.b'],
    ['["a"].b', 'a.b'],
    ['subsets.0', 'subsets[0]'],
    ['data["0"]', 'data["0"]'],
    ['data["*"]', 'data["*"]'],
    ['data[""]', 'data[""]'],
    ['data["say \\"hi\\""]', 'data["say \\"hi\\""]'],
    ['', ''],
  ])('writes %j as %j', (source, canonical) => {
    expect(formatPath(parsePath(source))).toBe(canonical);
  });
});

describe('formatLocation', () => {
  it('writes indices in brackets and quotes keys with . [ ] "', () => {
    expect(formatLocation(['subsets', 0, 'addresses', 2, 'ip'])).toBe('subsets[0].addresses[2].ip');
    expect(formatLocation(['metadata', 'annotations', 'example.com/a'])).toBe(
      'metadata.annotations["example.com/a"]',
    );
    expect(formatLocation(['a[b]', 'c"d'])).toBe('["a[b]"]["c\\"d"]');
    expect(formatLocation([])).toBe('');
    expect(formatLocation([0])).toBe('[0]');
  });
});

const endpoints = () => ({
  metadata: { name: 'svc', annotations: { 'a.b/c': 'x', plain: 'y' } },
  subsets: [
    { addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }] },
    { addresses: [{ ip: '10.0.0.3' }] },
  ],
});

describe('matchPath', () => {
  it('fans out over arrays and maps, in order', () => {
    const matches = matchPath(endpoints(), parsePath('subsets[*].addresses[*].ip'));
    expect(matches).toEqual([
      { location: ['subsets', 0, 'addresses', 0, 'ip'], value: '10.0.0.1' },
      { location: ['subsets', 0, 'addresses', 1, 'ip'], value: '10.0.0.2' },
      { location: ['subsets', 1, 'addresses', 0, 'ip'], value: '10.0.0.3' },
    ]);
    expect(matchPath(endpoints(), parsePath('metadata.annotations[*]'))).toEqual([
      { location: ['metadata', 'annotations', 'a.b/c'], value: 'x' },
      { location: ['metadata', 'annotations', 'plain'], value: 'y' },
    ]);
  });

  it('gives nothing for a missing path, and the whole object for the empty path', () => {
    expect(matchPath(endpoints(), parsePath('metadata.labels[*]'))).toEqual([]);
    expect(matchPath(endpoints(), parsePath('subsets[5]'))).toEqual([]);
    expect(matchPath(endpoints(), parsePath('metadata.name.length'))).toEqual([]);
    const root = endpoints();
    expect(matchPath(root, [])).toEqual([{ location: [], value: root }]);
  });

  it('indexes arrays with integers and reads digit keys on maps', () => {
    expect(matchPath(endpoints(), parsePath('subsets[1].addresses[0].ip'))[0]?.value).toBe(
      '10.0.0.3',
    );
    expect(matchPath({ data: { '0': 'zero' } }, parsePath('data.0'))).toEqual([
      { location: ['data', '0'], value: 'zero' },
    ]);
    expect(matchPath({ data: ['zero'] }, parsePath('data["0"]'))).toEqual([]);
  });

  it('never reaches prototype properties', () => {
    expect(matchPath({ a: {} }, parsePath('a.__proto__'))).toEqual([]);
    expect(matchPath({ a: {} }, parsePath('a.constructor'))).toEqual([]);
    expect(matchPath({ a: 'text' }, parsePath('a.length'))).toEqual([]);
    expect(matchPath({ a: [1] }, parsePath('a.length'))).toEqual([]);
    const own = JSON.parse('{"a":{"__proto__":"own"}}') as unknown;
    expect(matchPath(own, parsePath('a.__proto__'))).toEqual([
      { location: ['a', '__proto__'], value: 'own' },
    ]);
  });
});

describe('getAt, setAt, deleteAt', () => {
  it('reads own values only', () => {
    expect(getAt(endpoints(), ['subsets', 0, 'addresses', 1, 'ip'])).toBe('10.0.0.2');
    expect(getAt(endpoints(), ['subsets', 9])).toBeUndefined();
    expect(getAt({}, ['toString'])).toBeUndefined();
    expect(getAt({ a: [1] }, ['a', 'length'])).toBeUndefined();
  });

  it('sets in place, creating missing containers', () => {
    const root: Record<string, unknown> = endpoints();
    setAt(root, ['metadata', 'labels', 'app'], 'web');
    setAt(root, ['subsets', 0, 'addresses', 0, 'ip'], '1.1.1.1');
    setAt(root, ['extra', 0], 'first');
    expect(getAt(root, ['metadata', 'labels'])).toEqual({ app: 'web' });
    expect(getAt(root, ['subsets', 0, 'addresses', 0, 'ip'])).toBe('1.1.1.1');
    expect(root.extra).toEqual(['first']);
  });

  it('refuses prototype keys and impossible steps', () => {
    const root: Record<string, unknown> = { a: {}, list: [1] };
    expect(() => setAt(root, ['a', '__proto__', 'polluted'], true)).toThrow(PathAccessError);
    expect(() => setAt(root, ['constructor', 'prototype'], {})).toThrow(/prototype/);
    expect(() => deleteAt(root, ['a', '__proto__'])).toThrow(PathAccessError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(() => setAt(root, ['list', 5], 2)).toThrow(/outside list/);
    expect(() => setAt(root, ['list', 'x'], 2)).toThrow(/not an index/);
    expect(() => setAt({ a: 'text' }, ['a', 'b'], 2)).toThrow(/a is a string/);
    expect(() => setAt(root, [], 1)).toThrow(PathAccessError);
  });

  it('deletes map entries and splices array elements', () => {
    const root = endpoints();
    deleteAt(root, ['metadata', 'annotations', 'plain']);
    deleteAt(root, ['subsets', 0, 'addresses', 0]);
    deleteAt(root, ['missing', 'path']);
    expect(root.metadata.annotations).toEqual({ 'a.b/c': 'x' });
    expect(root.subsets[0]?.addresses).toEqual([{ ip: '10.0.0.2' }]);
  });
});

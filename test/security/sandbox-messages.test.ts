/**
 * Error messages never carry data (issue 10, finding 8, the expression part). Expression errors go
 * into sync reasons, logs and Kubernetes Events; an expression that fails on a token must not put
 * the token there. Each case feeds a secret through a way of failing and checks that the message
 * still says what kind of problem it was, and does not contain the secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import type { ExpressionErrorCode } from '../../lib/patches/types.ts';
import { failure, sampleContext } from './sandbox-support.ts';

let engine: ExpressionEngine;
beforeAll(async () => {
  engine = await createExpressionEngine();
});
afterAll(() => engine.dispose());

const SECRET = 'S3cr3tT0kenQ9';

/** [how it fails, expression, value, code, what the message must still say] */
const LEAKS: [string, string, unknown, ExpressionErrorCode, RegExp][] = [
  [
    'JSON.parse of a token',
    'JSON.parse(value)',
    SECRET,
    'runtime',
    /SyntaxError: unexpected token/,
  ],
  ['JSON.parse of a broken object', 'JSON.parse("{" + value)', SECRET, 'runtime', /SyntaxError/],
  [
    'virtualToHostDNS of a token',
    'virtualToHostDNS(value)',
    SECRET,
    'runtime',
    /NamingError: .*fewer than three/,
  ],
  [
    'virtualToHostDNS with a bad service name',
    'virtualToHostDNS(value + ".prod.svc")',
    SECRET,
    'runtime',
    /service name is not a DNS-1123 label/,
  ],
  [
    'virtualToHostDNS with a bad namespace',
    'virtualToHostDNS("db." + value + ".svc")',
    SECRET,
    'runtime',
    /namespace is not a DNS-1123 label/,
  ],
  [
    'virtualToHostDNS with a bad third part',
    'virtualToHostDNS("db.prod." + value)',
    SECRET,
    'runtime',
    /third part is not "svc"/,
  ],
  [
    'virtualToHostDNS with a bad domain',
    'virtualToHostDNS("db.prod.svc." + value + "_")',
    SECRET,
    'runtime',
    /cluster domain contains an invalid label/,
  ],
  ['a thrown string', '(() => { throw value; })()', SECRET, 'runtime', /threw: a string/],
  ['a thrown Error', '(() => { throw new Error(value); })()', SECRET, 'runtime', /threw: Error/],
  [
    'a thrown TypeError with the value in its text',
    '(() => { throw new TypeError("bad label: " + value); })()',
    SECRET,
    'runtime',
    /TypeError/,
  ],
  [
    'a thrown object with name and message',
    '(() => { throw { name: value, message: value }; })()',
    SECRET,
    'runtime',
    /threw: an object/,
  ],
  [
    'an Error renamed to the value',
    '(() => { const e = new Error("x"); e.name = value; throw e; })()',
    SECRET,
    'runtime',
    /threw: an error/,
  ],
  [
    'an Error with the value as cause',
    '(() => { throw new Error(value, { cause: value }); })()',
    SECRET,
    'runtime',
    /Error/,
  ],
  [
    'an AggregateError of the value',
    '(() => { throw new AggregateError([value], value); })()',
    SECRET,
    'runtime',
    /AggregateError/,
  ],
  ['a thrown array', '(() => { throw [value]; })()', SECRET, 'runtime', /threw: an array/],
  [
    'a thrown Proxy answering the value',
    '(() => { throw new Proxy({}, { get: () => value, getOwnPropertyDescriptor: () => ({ value, configurable: true }) }); })()',
    SECRET,
    'runtime',
    /threw/,
  ],
  [
    'a thrown object whose toString gives the value',
    '(() => { throw { toString() { return value; } }; })()',
    SECRET,
    'runtime',
    /threw: an object/,
  ],
  [
    'an Error subclass carrying the value',
    '(() => { class E extends Error { constructor() { super(value); this.name = "E"; } } throw new E(); })()',
    SECRET,
    'runtime',
    /threw: E/,
  ],
  [
    'reading a property named by the value of undefined',
    '(() => { const o = {}; return o[value][value]; })()',
    SECRET,
    'runtime',
    /cannot read property (of|'…' of) undefined/,
  ],
  [
    'writing a read-only property named by the value',
    '(() => { const o = Object.freeze({ [value]: 1 }); o[value] = 2; })()',
    SECRET,
    'runtime',
    /'…' is read-only/,
  ],
  [
    'setting a property named by the value on null',
    '(() => { const o = null; o[value] = 1; })()',
    SECRET,
    'runtime',
    /TypeError/,
  ],
  [
    'calling a constructor named by the value',
    'new ({ [value]: () => 1 })[value]()',
    SECRET,
    'runtime',
    /is not a constructor/,
  ],
  ['BigInt of the value', 'BigInt(value)', SECRET, 'runtime', /invalid bigint literal/],
  [
    'decodeURIComponent of the value',
    'decodeURIComponent("%" + value)',
    SECRET,
    'runtime',
    /URIError/,
  ],
  [
    'a regular expression of the value',
    'new RegExp(value + "(")',
    SECRET,
    'runtime',
    /SyntaxError/,
  ],
  ['normalize with the value as form', 'value.normalize(value)', SECRET, 'runtime', /RangeError/],
  ['atob of the value', 'atob(value + "*")', SECRET, 'runtime', /not correctly encoded/],
  [
    'btoa of the value',
    'btoa(value + "\\u0100")',
    SECRET,
    'runtime',
    /outside of the Latin1 range/,
  ],
  [
    'JSON.parse of a secret in the context',
    'JSON.parse(context.virtualObject.metadata.annotations.a)',
    '',
    'runtime',
    /SyntaxError/,
  ],
  [
    'a result keyed by the value holding a function',
    '({ [value]: () => 1 })',
    SECRET,
    'result',
    /a function/,
  ],
  ['a Map of the value', 'new Map([[value, value]])', SECRET, 'result', /not a plain object/],
  [
    'a cyclic value from the caller',
    'value',
    (() => {
      const o: Record<string, unknown> = { [SECRET]: SECRET };
      o['self'] = o;
      return o;
    })(),
    'internal',
    /not JSON/,
  ],
];

describe('no expression error message carries data', () => {
  const ctx = sampleContext();
  (
    ctx.virtualObject as { metadata: { annotations: Record<string, string> } }
  ).metadata.annotations = { a: `{"token": ${SECRET}}` };

  it.each(LEAKS)('%s', (_how, src, value, code, says) => {
    const message = failure(engine.evaluate(src, value, ctx), code);
    expect(message).toMatch(says);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain(SECRET.slice(0, 6));
  });

  it('still quotes what the source itself wrote', () => {
    expect(
      failure(
        engine.evaluate('(() => { throw new Error("no team label"); })()', 'v', ctx),
        'runtime',
      ),
    ).toBe('expression threw: Error: no team label (line 1, column 25)');
    expect(failure(engine.evaluate('value.team.name', {}, ctx), 'runtime')).toBe(
      "expression threw: TypeError: cannot read property 'name' of undefined (line 1, column 11)",
    );
    expect(failure(engine.evaluate('(() => { throw "boom"; })()', 'v', ctx), 'runtime')).toBe(
      'expression threw: "boom"',
    );
  });
});

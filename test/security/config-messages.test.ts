/**
 * Content in messages (issue 10, findings 7 and 8, the loader part): whatever file a
 * configuration location points at (a process's environment, a Secret, a kubeconfig, a real
 * configuration with a token in it), the loader's diagnostics name places and kinds of problem,
 * never a value read from the file. Diagnostics travel into reasons, warnings, logs and Events.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lib/config/parse-config.ts';

const SECRET = 'AKIAQX3EXAMPLE7SECRET9';

/** Files that are not configurations, or are broken ones, each holding the secret as a value. */
const FILES: Array<[string, string]> = [
  ['a process environment', `PATH=/usr/bin\0AWS_SECRET_ACCESS_KEY=${SECRET}\0HOME=/root\0`],
  ['an environment as lines', `AWS_SECRET_ACCESS_KEY=${SECRET}\nHOME=/root\n`],
  ['a Secret manifest', `apiVersion: v1\nkind: Secret\ndata:\n  token: ${SECRET}\n`],
  ['a kubeconfig', `users:\n- name: u\n  user:\n    token: ${SECRET}\n`],
  ['a secret as an enabled flag', `sync:\n  toHost:\n    endpoints:\n      enabled: ${SECRET}\n`],
  [
    'a secret as a patch path',
    `sync:\n  toHost:\n    endpoints:\n      patches:\n      - path: "a[${SECRET}"\n        expression: value\n`,
  ],
  ['a secret as the clusterDomain', `networking:\n  advanced:\n    clusterDomain: ${SECRET}\n`],
  [
    'a secret as a host namespace',
    `sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          a: ${SECRET}\n`,
  ],
  [
    'a secret in a broken expression',
    `sync:\n  toHost:\n    endpoints:\n      patches:\n      - path: metadata.labels.x\n        expression: "let ${SECRET} = 1"\n`,
  ],
  ['a secret in an unclosed quote', `sync:\n  toHost:\n    endpoints: "${SECRET}\n`],
  ['a secret after a syntax error', `sync: [\n  ${SECRET}: {\n`],
  [
    'a secret as a reference kind',
    `sync:\n  toHost:\n    endpoints:\n      patches:\n      - path: a\n        reference:\n          kind: ${SECRET}\n`,
  ],
  ['a secret as a YAML tag', `sync: !${SECRET} {}\n`],
  ['a secret in a second document', `sync: {}\n---\ntoken: ${SECRET}\n`],
];

function messages(text: string): string[] {
  return parseConfig(text, 'tenant.yaml').diagnostics.map((d) => d.message);
}

describe('findings 7 and 8: the loader never echoes a value it read', () => {
  it.each(FILES)('%s', (_name, text) => {
    const said = messages(text);
    expect(said.length).toBeGreaterThan(0);
    for (const message of said) expect(message).not.toContain(SECRET.slice(0, 10));
  });

  it('no value of a random configuration-shaped file appears in a diagnostic (fuzz)', () => {
    const secret = fc.stringMatching(/^[A-Z0-9]{20,32}$/);
    const place = fc.constantFrom(
      (s: string) => `sync:\n  toHost:\n    endpoints:\n      enabled: ${s}\n`,
      (s: string) => `sync:\n  toHost:\n    endpoints:\n      patches: ${s}\n`,
      (s: string) =>
        `sync:\n  toHost:\n    endpoints:\n      patches:\n      - path: ${s}[\n        expression: value\n`,
      (s: string) =>
        `sync:\n  toHost:\n    endpoints:\n      patches:\n      - path: a\n        expression: "${s} ${s}"\n`,
      (s: string) => `networking:\n  advanced:\n    clusterDomain: ${s}.-\n`,
      (s: string) => `sync: ${s}\n`,
      (s: string) => `${s}\n`,
      (s: string) => `sync: {toHost: [${s}\n`,
      (s: string) =>
        `sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          x: ${s}\n          y: ${s}\n`,
    );
    fc.assert(
      fc.property(secret, place, (token, shape) => {
        for (const message of messages(shape(token))) {
          expect(message).not.toContain(token.slice(0, 16));
        }
      }),
      { numRuns: 400 },
    );
  });
});

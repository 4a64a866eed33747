/**
 * Secrets in messages (issue 10, finding 8, the credentials part): a malformed host kubeconfig
 * must not put its text into reasons, logs or Events. The YAML parser's own message carries a
 * code frame of the lines around the mistake, and those lines hold tokens and passwords; the
 * error names the place and the kind of problem instead.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostClientProvider } from '../../lib/functions/credentials.ts';
import { kubeConfigFromFile, kubeConfigFromString } from '../../lib/kube/index.ts';

const TOKEN = 'sk-live-7f3a9c1e5b2d4f6a8c0e2b4d6f8a0c2e';

/** Kubeconfigs broken in different ways, each with the token next to the mistake. */
const BROKEN: Array<[string, string]> = [
  [
    'bad indentation right after the token',
    `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: ${TOKEN}\n   bad: indent\n`,
  ],
  ['an unclosed flow mapping holding the token', `users: [{name: u, user: {token: ${TOKEN}}\n`],
  ['an unclosed quote around the token', `users:\n- name: u\n  user:\n    token: "${TOKEN}\n`],
  [
    'a duplicate key whose value is the token',
    `users:\n- name: u\n  user:\n    token: a\n    token: ${TOKEN}\n`,
  ],
  ['the token as an unknown tag', `users:\n- name: u\n  user: !<${TOKEN}> {}\n`],
  ['the token as a key of a broken mapping', `${TOKEN}: a\n  - b\n`],
  ['a tab in the indentation of the token line', `users:\n- name: u\n  user:\n\ttoken: ${TOKEN}\n`],
];

describe('finding 8: kubeconfig errors carry no kubeconfig text', () => {
  it.each(BROKEN)('%s: parsing a string', (_name, text) => {
    let message = '';
    try {
      kubeConfigFromString(text, { source: 'inline' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/cannot parse|is missing|current-context/);
    expect(message).not.toContain(TOKEN);
    expect(message).not.toContain(TOKEN.slice(0, 12));
  });

  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(BROKEN)('%s: reading a file', (name, text) => {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.yaml`);
    writeFileSync(file, text);
    expect(() => kubeConfigFromFile(file)).toThrow();
    try {
      kubeConfigFromFile(file);
    } catch (err) {
      expect((err as Error).message).not.toContain(TOKEN.slice(0, 12));
      // The place is named, so the operator can find the mistake.
      expect((err as Error).message).toContain(file);
    }
  });

  it.each(BROKEN)(
    '%s: HOST_CREDENTIALS=inline: as the function reports it',
    async (_name, text) => {
      const provider = createHostClientProvider({ kind: 'inline', kubeconfig: text });
      const failure = await provider.client().then(
        () => undefined,
        (err: Error) => err,
      );
      expect(failure).toBeInstanceOf(Error);
      expect(failure!.message).toMatch(/unusable/);
      expect(failure!.message).not.toContain(TOKEN.slice(0, 12));
      expect(JSON.stringify(failure)).not.toContain(TOKEN.slice(0, 12));
    },
  );

  it('a YAML mistake is reported with its line and column', () => {
    expect(() => kubeConfigFromString(BROKEN[0]![1], { source: 'inline' })).toThrow(
      /not valid YAML at line 7, column \d+/,
    );
  });

  it('a structural complaint names the field by index', () => {
    expect(() =>
      kubeConfigFromString('clusters:\n- cluster: {server: "https://h"}\n', { source: 'inline' }),
    ).toThrow(/clusters\[0\]\.name is missing/);
  });

  it('no broken kubeconfig puts any of its lines into the message (fuzz)', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{24,40}$/);
    const breakage = fc.constantFrom('\n   x: y\n', ': [\n', '"\n', '\t', ' {', '\n- ', ': : :');
    fc.assert(
      fc.property(secret, breakage, breakage, (token, before, after) => {
        const text = `users:\n- name: u\n  user:\n    token: ${before}${token}${after}\n`;
        let message = '';
        try {
          kubeConfigFromString(text, { source: 'inline' });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message).not.toContain(token.slice(0, 16));
      }),
      { numRuns: 300 },
    );
  });
});

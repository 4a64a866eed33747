/**
 * The examples and the docs must not lie: the examples load as their comments say, and the
 * validate output shown in docs/configuration.md is what the command prints today.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CommandIO } from '../../lib/cli/command.ts';
import { main } from '../../lib/cli/main.ts';
import { parseConfig } from '../../lib/config/parse-config.ts';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

describe('examples', () => {
  it('endpoints.yaml is valid and uses every patch shape of the spec', () => {
    const { config } = parseConfig(read('examples/endpoints.yaml'), 'examples/endpoints.yaml');
    const endpoints = config!.resources.endpoints.patches;
    expect(
      endpoints.some(
        (p) =>
          p.path.endsWith('[*]') &&
          p.expression?.includes('+ value') &&
          p.reverseExpression?.includes('slice'),
      ),
    ).toBe(true);
    expect(endpoints.some((p) => /^'?"[^"]*"'?$/.test(p.expression ?? ''))).toBe(true);
    expect(
      endpoints.some((p) => p.expression === 'valueExists ? virtualToHostDNS(value) : undefined'),
    ).toBe(true);
    expect(
      endpoints.some(
        (p) => p.reference?.kind === 'Secret' && p.path.startsWith('metadata.annotations["'),
      ),
    ).toBe(true);
    const secrets = config!.resources.secrets.patches;
    expect(secrets.map((p) => [p.path, p.expression, p.reverseExpression])).toEqual([
      [
        'metadata.annotations["example.com/token"]',
        'valueExists ? btoa(value) : undefined',
        undefined,
      ],
      [
        'metadata.annotations["example.com/token"]',
        undefined,
        'valueExists ? atob(value) : undefined',
      ],
    ]);
    expect(config!.raw['controlPlane']).toEqual({ distro: { k8s: { enabled: true } } });
  });

  it('every example carries the schema modeline', () => {
    for (const name of ['endpoints', 'minimal', 'invalid']) {
      expect(read(`examples/${name}.yaml`).split('\n')[0]).toBe(
        '# yaml-language-server: $schema=../schema/config.schema.json',
      );
    }
  });

  it('docs/configuration.md shows the real output of validate on examples/invalid.yaml', async () => {
    const io: CommandIO & { err: string } = {
      err: '',
      stdout: { write: () => true },
      stderr: { write: (chunk: string) => (io.err += chunk) },
      readFile: async (path: string) => read(path),
    };
    expect(await main(['validate', '--config', 'examples/invalid.yaml'], io)).toBe(1);
    const docs = read('docs/configuration.md');
    const block = docs
      .split('<!-- validate-output:examples/invalid.yaml -->\n```\n')[1]
      ?.split('```')[0];
    expect(block).toBe(io.err);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertValid,
  ConfigError,
  formatDiagnostic,
  loadConfigFile,
} from '../../lib/config/index.ts';

const fixtures = new URL('../fixtures/config/', import.meta.url).pathname;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'endpoint-sync-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadConfigFile', () => {
  it('loads a full reference-project configuration, keeping every foreign section', async () => {
    const path = join(fixtures, 'vcluster-full.yaml');
    const result = await loadConfigFile(path);
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${path}:45:7: warning: sync.toHost.secrets.all is a virtual-cluster setting that endpoint-sync does not use; it is kept in context.virtualcluster.config but has no effect here (sync.toHost.secrets.all)`,
      `${path}:48:7: warning: sync.toHost.configMaps.all is a virtual-cluster setting that endpoint-sync does not use; it is kept in context.virtualcluster.config but has no effect here (sync.toHost.configMaps.all)`,
    ]);
    const config = assertValid(result);
    expect(config.source).toBe(path);
    expect(config.resources.endpoints.patches).toHaveLength(1);
    const raw = config.raw as Record<string, Record<string, unknown>>;
    expect(raw['telemetry']).toEqual({ enabled: false });
    expect(raw['networking']?.['replicateServices']).toEqual({
      toHost: [{ from: 'default/a', to: 'other/b' }],
    });
    const toHost = raw['sync']?.['toHost'] as Record<string, unknown> | undefined;
    expect(toHost?.['pods']).toMatchObject({ enabled: true });
  });

  it('reports an error at the right line in a CRLF file with a block scalar', async () => {
    const path = join(fixtures, 'crlf-bad-expression.yaml');
    const { config, diagnostics } = await loadConfigFile(path);
    expect(config).toBeUndefined();
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      line: 8,
      column: 15,
      configPath: 'sync.toHost.endpoints.patches[0].expression',
    });
  });

  it('collects every error of a file with many mistakes', async () => {
    const path = join(fixtures, 'every-error.yaml');
    const { config, diagnostics } = await loadConfigFile(path);
    expect(config).toBeUndefined();
    expect(
      diagnostics
        .filter((d) => d.severity === 'error')
        .map((d) => `${d.line}:${d.column} ${d.configPath}`),
    ).toEqual([
      '4:16 sync.toHost.endpoints.enabled',
      '5:7 sync.toHost.endpoints.unknown',
      '7:17 sync.toHost.endpoints.patches[0].path',
      '10:20 sync.toHost.endpoints.patches[1].path',
      '12:13 sync.toHost.endpoints.patches[1].reference.apiVersion',
      '14:11 sync.toHost.endpoints.patches[2]',
      '17:11 sync.toHost.endpoints.patches[3]',
      '21:17 sync.toHost.endpoints.patches[5]',
      '24:16 sync.toHost.namespaces.enabled',
      '27:14 sync.toHost.namespaces.mappings.byName.a',
      '30:20 networking.advanced.clusterDomain',
    ]);
  });

  it('turns an unreadable file into one error naming the path and the reason', async () => {
    const missing = join(dir, 'missing.yaml');
    expect(await loadConfigFile(missing)).toEqual({
      diagnostics: [
        {
          severity: 'error',
          message: `cannot read the configuration file ${missing}: no such file (ENOENT)`,
          configPath: '',
          file: missing,
          line: 1,
          column: 1,
        },
      ],
    });
    const directory = await loadConfigFile(dir);
    expect(directory.diagnostics[0]?.message).toBe(
      `cannot read the configuration file ${dir}: it is a directory (EISDIR)`,
    );
  });

  it('reads a file written just now', async () => {
    const path = join(dir, 'fresh.yaml');
    await writeFile(
      path,
      'sync:\n  toHost:\n    endpoints:\n      enabled: false\n    services:\n      enabled: false\n',
    );
    const config = assertValid(await loadConfigFile(path));
    expect(config.resources.endpoints.enabled).toBe(false);
  });
});

describe('ConfigError and assertValid', () => {
  it('throws every error, formatted, and carries the diagnostics', async () => {
    const result = await loadConfigFile(join(fixtures, 'every-error.yaml'));
    let thrown: unknown;
    try {
      assertValid(result);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const error = thrown as ConfigError;
    expect(error.name).toBe('ConfigError');
    expect(error.diagnostics).toBe(result.diagnostics);
    expect(error.message.split('\n')[0]).toBe(
      `${join(fixtures, 'every-error.yaml')}: the configuration has 11 errors; fix them and retry`,
    );
    expect(error.message.split('\n')).toHaveLength(12);
  });
});

import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import {
  parseForwarderKey,
  parseKeySet,
  signEvent,
  verifySignature,
} from '../../lib/tenancy/index.ts';
import { bufferIO } from './buffer-io.ts';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const entry = (tenant: string, namespaces: string[]) =>
  JSON.stringify({
    tenant,
    virtualCluster: { name: tenant, namespace: namespaces[0] },
    config: `s3://b/${tenant}.yaml`,
    hostNamespaces: namespaces,
    signingKeys: `secretsmanager:endpoint-sync/tenants/${tenant}`,
  });

describe('endpoint-sync tenants', () => {
  it('keygen writes a matching key pair, private to the user, and never overwrites', async () => {
    dir = await mkdtemp(join(tmpdir(), 'keygen-'));
    const out = join(dir, 'k');
    const io = bufferIO();
    expect(
      await main(
        ['tenants', 'keygen', '--tenant', 'team-a', '--key-id', '2026-11', '--out', out],
        io,
      ),
    ).toBe(0);
    const forwarder = parseForwarderKey(await readFile(`${out}.forwarder.json`, 'utf8'), 'f');
    const keys = parseKeySet(await readFile(`${out}.function.json`, 'utf8'), 'g');
    const sealed = signEvent('{}', forwarder);
    expect(verifySignature(sealed, keys.get('2026-11')!)).toBe(true);
    expect((await stat(`${out}.forwarder.json`)).mode & 0o077).toBe(0);
    const again = bufferIO();
    expect(
      await main(['tenants', 'keygen', '--tenant', 'team-a', '--key-id', 'x', '--out', out], again),
    ).toBe(1);
    expect(again.err).toContain('EEXIST');
  });

  it('check accepts disjoint tenants and refuses overlapping host namespaces', async () => {
    const io = bufferIO({
      'a.yaml': entry('a', ['vc-a', 'a-x-*']),
      'ax.yaml': entry('a-x', ['vc-ax', 'a-x-x-*']),
      'b.yaml': entry('b', ['vc-b', 'b-x-*']),
    });
    expect(await main(['tenants', 'check', 'a.yaml', 'b.yaml'], io)).toBe(0);
    expect(io.out).toContain('2 tenants: valid, no overlaps');
    const clash = bufferIO({
      'a.yaml': entry('a', ['vc-a', 'a-x-*']),
      'ax.yaml': entry('a-x', ['vc-ax', 'a-x-x-*']),
    });
    expect(await main(['tenants', 'check', 'a.yaml', 'ax.yaml'], clash)).toBe(1);
    expect(clash.err).toContain('a-x-* (a) and a-x-x-* (a-x) overlap');
  });

  it('check names a malformed entry without echoing its values', async () => {
    const io = bufferIO({ 'bad.yaml': entry('a', ['vc-a']).replace('"a"', '"SECRET-CANARY"') });
    expect(await main(['tenants', 'check', 'bad.yaml'], io)).toBe(1);
    expect(io.err).toContain('bad.yaml');
    expect(io.err).not.toContain('SECRET-CANARY');
  });
});

/**
 * `endpoint-sync validate --vcluster` lists every field of a vcluster configuration that
 * endpoint-sync ignores or treats differently, with its place, before anything is deployed.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { bufferIO } from '../cli/buffer-io.ts';

const FILE = 'test/fixtures/config/vcluster-differences.yaml';

describe('validate --vcluster', () => {
  it('lists each difference at its field, and still exits 0 for a valid file', async () => {
    const io = bufferIO();
    expect(await main(['validate', '--config', FILE, '--vcluster'], io)).toBe(0);
    const lines = io.err.trimEnd().split('\n');
    expect(lines.map((l) => l.replace(/: warning: vcluster: .*\((.*)\)$/, ' $1'))).toEqual([
      `${FILE}:3:5 sync.toHost.pods`,
      `${FILE}:11:11 sync.toHost.endpoints.patches[1]`,
      `${FILE}:15:11 sync.toHost.endpoints.patches[2]`,
      `${FILE}:22:7 sync.toHost.services`,
      `${FILE}:24:5 sync.fromHost`,
    ]);
    // patches[0] references a Secret: named as vcluster names it, so it is not listed.
    expect(lines[1]).toContain('vcluster has no mapper for kind Deployment');
    expect(lines[2]).toContain('an expression on the empty path gets the whole desired object');
    expect(io.out).toContain('5 fields treated differently from vcluster');
  });

  it('says when nothing differs, and prints nothing extra without the flag', async () => {
    const quiet = bufferIO();
    expect(await main(['validate', '--config', 'examples/minimal.yaml', '--vcluster'], quiet)).toBe(
      0,
    );
    expect(quiet.out).toContain('nothing in it is treated differently from vcluster');
    const plain = bufferIO();
    expect(await main(['validate', '--config', FILE], plain)).toBe(0);
    expect(plain.err).not.toContain('vcluster:');
  });

  it('never prints values of the file', async () => {
    const io = bufferIO();
    await main(['validate', '--config', FILE, '--vcluster'], io);
    expect(io.err).not.toContain('example.com/tls');
    expect(io.err).not.toContain('"Endpoints"');
  });
});

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
    expect(
      lines.map((l) => l.replace(/: warning: vcluster: .*?(\((sync\.[^()]*)\))?$/, ' $2')),
    ).toEqual([
      `${FILE}:1:1 `,
      `${FILE}:1:1 `,
      `${FILE}:3:5 sync.toHost.pods`,
      `${FILE}:13:11 sync.toHost.endpoints.patches[2]`,
      `${FILE}:19:11 sync.toHost.endpoints.patches[4]`,
      `${FILE}:22:11 sync.toHost.endpoints.patches[5]`,
      `${FILE}:26:11 sync.toHost.secrets.patches[0]`,
      `${FILE}:26:11 sync.toHost.secrets.patches[0]`,
      `${FILE}:30:7 sync.toHost.services`,
      `${FILE}:32:5 sync.fromHost`,
    ]);
    // patches[0] references a Secret: a kind vcluster maps, so it is not listed.
    expect(lines[0]).toContain('the marker domain is virtualcluster.loft.sh');
    expect(lines[0]).toContain('run with the marker domain vcluster.loft.sh');
    expect(lines[1]).toContain('every host copy gets an owner reference');
    expect(lines[3]).toContain('an expression on the empty path gets the whole desired object');
    expect(lines[4]).toContain('dotted ".*"');
    expect(lines[5]).toContain("vcluster's validation refuses two items with the same path");
    expect(lines[7]).toContain('returns a new object without spreading value');
    expect(io.out).toContain('10 fields treated differently from vcluster');
  });

  it("reports the owner-reference setting while setOwner is on (vcluster's default), at the key when it is written", async () => {
    const io = bufferIO();
    await main(['validate', '--config', 'examples/minimal.yaml', '--vcluster'], io);
    expect(io.err).toContain(
      'examples/minimal.yaml:1:1: warning: vcluster: experimental.syncSettings.setOwner is on',
    );
    const minimal = await bufferIO().readFile('examples/minimal.yaml');
    const written = bufferIO({
      'm.yaml': `${minimal}experimental:\n  syncSettings:\n    setOwner: true\n`,
    });
    await main(['validate', '--config', 'm.yaml', '--vcluster'], written);
    expect(written.err).toMatch(
      /m\.yaml:14:15: warning: vcluster: experimental.syncSettings.setOwner is on.*\(experimental\.syncSettings\.setOwner\)/,
    );
  });

  it("says nothing of the marker domain when it is vcluster's", async () => {
    const io = bufferIO();
    await main(
      ['validate', '--config', FILE, '--vcluster', '--marker-domain', 'vcluster.loft.sh'],
      io,
    );
    expect(io.err).not.toContain('marker domain');
  });

  it('says when nothing differs, and prints nothing extra without the flag', async () => {
    const minimal = await bufferIO().readFile('examples/minimal.yaml');
    const quiet = bufferIO({
      'm.yaml': `${minimal}experimental:\n  syncSettings:\n    setOwner: false\n`,
    });
    expect(
      await main(
        ['validate', '--config', 'm.yaml', '--vcluster', '--marker-domain', 'vcluster.loft.sh'],
        quiet,
      ),
    ).toBe(0);
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

/**
 * `endpoint-sync sign`: the envelope it prints verifies under the key it was given and carries
 * the event as compact JSON; a bad key file or an event that is not JSON is refused without
 * quoting either; an event the function would refuse is still signed, with the reasons.
 */
import { describe, expect, it } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { parseEvent } from '../../lib/contract/index.ts';
import { generateSigningKey, signedEventIssues, verifySignature } from '../../lib/tenancy/index.ts';
import { bufferIO } from './buffer-io.ts';

const key = generateSigningKey('team-a', 'k1').forwarder;
const event = {
  version: 2,
  virtualCluster: { name: 'team-a', namespace: 'team-a' },
  items: [
    {
      id: '1',
      direction: 'toHost',
      key: { resource: 'endpoints', namespace: 'default', name: 'db' },
      virtualObject: null,
    },
  ],
};

async function sign(files: Record<string, string>, args: string[], stdin = '') {
  const io = bufferIO(files, stdin);
  const code = await main(['sign', ...args], io);
  return { code, out: io.out, err: io.err };
}

describe('endpoint-sync sign', () => {
  it('prints an envelope that verifies under the key, with the event as compact JSON', async () => {
    const r = await sign(
      { 'key.json': JSON.stringify(key), 'event.json': JSON.stringify(event, null, 2) },
      ['--key-file', 'key.json', '--event', 'event.json'],
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const envelope = JSON.parse(r.out);
    expect(signedEventIssues(envelope)).toEqual([]);
    expect(envelope).toMatchObject({ signed: 1, tenant: 'team-a', keyId: 'k1' });
    expect(Math.abs(envelope.issuedAt - Date.now())).toBeLessThan(60_000);
    expect(envelope.event).toBe(JSON.stringify(event));
    expect(parseEvent(JSON.parse(envelope.event)).ok).toBe(true);
    expect(verifySignature(envelope, Buffer.from(key.key, 'base64'))).toBe(true);
    const other = generateSigningKey('team-a', 'k1').forwarder;
    expect(verifySignature(envelope, Buffer.from(other.key, 'base64'))).toBe(false);
  });

  it('reads the event from standard input by default; each signature has its own nonce', async () => {
    const files = { 'key.json': JSON.stringify(key) };
    const a = JSON.parse((await sign(files, ['-k', 'key.json'], JSON.stringify(event))).out);
    const b = JSON.parse(
      (await sign(files, ['-k', 'key.json', '-e', '-'], JSON.stringify(event))).out,
    );
    expect(a.nonce).not.toBe(b.nonce);
    expect(verifySignature(b, Buffer.from(key.key, 'base64'))).toBe(true);
  });

  it('refuses a key file that is not a key, naming the file and never the key', async () => {
    const r = await sign(
      { 'key.json': JSON.stringify({ ...key, key: 'c2hvcnQ=' }), 'event.json': '{}' },
      ['--key-file', 'key.json', '--event', 'event.json'],
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain('endpoint-sync sign: signing keys key.json:');
    expect(r.err).not.toContain('c2hvcnQ=');
    expect(r.out).toBe('');
    const missing = await sign({}, ['--key-file', 'nowhere.json']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('cannot read --key-file nowhere.json');
    expect((await sign({}, [])).err).toContain('missing --key-file');
  });

  it('refuses an event that is not JSON without quoting it', async () => {
    const r = await sign({ 'key.json': JSON.stringify(key), 'e.json': 'tok=s3cr3t' }, [
      '--key-file',
      'key.json',
      '--event',
      'e.json',
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('the event in e.json is not JSON');
    expect(r.err).not.toContain('s3cr3t');
  });

  it('signs an event the function would refuse, and says why it will', async () => {
    const bad = { ...event, items: [{ ...event.items[0], key: { resource: 'endpoints' } }] };
    const r = await sign({ 'key.json': JSON.stringify(key), 'e.json': JSON.stringify(bad) }, [
      '-k',
      'key.json',
      '-e',
      'e.json',
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: the function will refuse items\[0\]: .*key/m);
    const version = await sign({ 'key.json': JSON.stringify(key), 'e.json': '{"version":9}' }, [
      '-k',
      'key.json',
      '-e',
      'e.json',
    ]);
    expect(version.code).toBe(0);
    expect(version.err).toMatch(
      /^warning: the function will refuse this event: invalid event: version/m,
    );
    expect(JSON.parse(version.out).event).toBe('{"version":9}');
  });
});

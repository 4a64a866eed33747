/**
 * Attacks on the tenant boundary of the sync function: forged, altered, replayed and
 * mis-addressed events, registry tricks, and reach outside a tenant's host namespaces. Every
 * case runs the real handler (behind the local Lambda endpoint, with the real InvokeCommand)
 * over a tenant registry in the local S3, and checks that nothing was written.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../lib/cli/main.ts';
import { type SyncEventV2, upgradeItem } from '../../lib/contract/index.ts';
import { registryTenants, settingsFromEnv, singleTenant } from '../../lib/functions/index.ts';
import { ListingTooLargeError, objectLister } from '../../lib/functions/object-text.ts';
import { inProcessPlanner, type Planner } from '../../lib/functions/planner/index.ts';
import { RESOURCES } from '../../lib/kube/index.ts';
import type { ObjectStore } from '../../lib/local/objectstore.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import { createNativeEngine } from '../../lib/patches/expression/index.ts';
import {
  generateSigningKey,
  looseControlPlaneOf,
  namespaceScope,
  parseForwarderKey,
  parseKeySet,
  parseTenantEntry,
  patternsOverlap,
  RegistryUnavailableError,
  ReplayGuard,
  type SignedEvent,
  type SigningKey,
  StoreTenantRegistry,
  signEvent,
  verifySignature,
} from '../../lib/tenancy/index.ts';
import { bufferIO } from '../cli/buffer-io.ts';
import {
  BASIC_CONFIG,
  BUCKET,
  CONFIG_KEY,
  credsSecret,
  endpointSlice,
  endpoints,
  event,
  HOST_NS,
  hostName as hostNameOf,
  hostVersions,
  item,
  type Stack,
  service,
  startStack,
  VC,
} from '../functions/harness.ts';

const CANARY = 'CANARY-SECRET-7f3a';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

interface Tenant {
  id: string;
  key: SigningKey;
  keysJson: Record<string, string>;
}

function tenant(id: string, keyId = 'k1'): Tenant {
  const k = generateSigningKey(id, keyId);
  return {
    id,
    key: { tenant: id, keyId, key: Buffer.from(k.forwarder.key, 'base64') },
    keysJson: k.function,
  };
}

const A = tenant(VC);
const B = tenant('team-b');

/** A registry entry for `t` (defaults: tenant A's virtual cluster in HOST_NS). */
function entry(t: Tenant, over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    tenant: t.id,
    virtualCluster: { name: t.id, namespace: t.id === VC ? HOST_NS : `${t.id}-host` },
    config: `s3://${BUCKET}/${t.id === VC ? CONFIG_KEY : `${t.id}.yaml`}`,
    signingKeys: `inline:${JSON.stringify(t.keysJson)}`,
    ...over,
  });
}

/** A gate over the registry `tenants/` in the stack's local S3. */
function registryOf(allowLocalFiles = true, options: { protectedNamespaces?: string[] } = {}) {
  return (store: ObjectStore) =>
    registryTenants({
      location: store.uri(BUCKET, 'tenants/'),
      s3: { client: store.client() },
      allowLocalFiles,
      ...options,
    });
}

/** A stack whose function serves a registry holding A and B (and `entries`, by tenant id). */
async function registryStack(
  entries: Record<string, string> = {},
  options: Parameters<typeof startStack>[0] = {},
): Promise<Stack> {
  stack = await startStack({ tenants: registryOf(), ...options });
  const all = { [A.id]: entry(A), [B.id]: entry(B), ...entries };
  for (const [id, text] of Object.entries(all)) {
    await stack.store.put(BUCKET, `tenants/${id}.yaml`, text);
  }
  await stack.store.put(BUCKET, `${B.id}.yaml`, BASIC_CONFIG);
  return stack;
}

function sealed(e: unknown, key: SigningKey, now?: number, nonce?: string): SignedEvent {
  return signEvent(JSON.stringify(e), key, now, nonce);
}

const one = () => event([item('a', 'db', endpoints('db'))]);

async function expectRefused(s: Stack, payload: unknown, code: string): Promise<void> {
  const before = await hostVersions(s);
  const result = await s.invoke(payload);
  expect(result.results.map((r) => [r.status, r.reasonCode])).toEqual(
    result.results.map(() => ['failed', code]),
  );
  expect(await hostVersions(s)).toEqual(before);
  expect(s.handler.telemetry.stats().refused[code]).toBeGreaterThanOrEqual(1);
  for (const r of result.results) expect(r.reason).not.toContain(CANARY);
}

/** What `run` wrote to stdout and stderr (the function's log lines), kept from the terminal. */
async function capturedOutput(run: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  const capture = ((chunk: string) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = capture;
  process.stderr.write = capture;
  try {
    await run();
  } finally {
    process.stdout.write = write;
    process.stderr.write = writeErr;
  }
  return lines;
}

describe('signed events over a tenant registry', () => {
  it('applies an event signed with the tenant key, taking identity and config from the registry', async () => {
    const s = await registryStack();
    const result = await s.invoke(sealed(one(), A.key));
    expect(result.results[0]).toMatchObject({ status: 'applied', reasonCode: 'created' });
  });

  it('refuses an unsigned event (a forwarder without a key)', async () => {
    await expectRefused(await registryStack(), one(), 'unsigned-event');
  });

  it.each([
    ['the event', (e: SignedEvent) => ({ ...e, event: e.event.replace('"db"', '"dc"') })],
    ['the tenant', (e: SignedEvent) => ({ ...e, tenant: B.id })],
    ['the key id', (e: SignedEvent) => ({ ...e, keyId: 'k2' })],
    ['the time', (e: SignedEvent) => ({ ...e, issuedAt: e.issuedAt + 1 })],
    [
      'the nonce',
      (e: SignedEvent) => ({
        ...e,
        nonce:
          `${e.nonce.slice(0, -1)}A` === e.nonce
            ? `${e.nonce.slice(0, -1)}B`
            : `${e.nonce.slice(0, -1)}A`,
      }),
    ],
    ['the signature', (e: SignedEvent) => ({ ...e, signature: `${e.signature.slice(0, -2)}AA` })],
  ])('refuses an envelope whose %s was altered after signing', async (_what, alter) => {
    const s = await registryStack();
    const payload = alter(sealed(one(), A.key));
    const result = await s.invoke(payload);
    expect(result.results[0]!.status).toBe('failed');
    expect(['bad-signature', 'unknown-signing-key', 'unknown-tenant']).toContain(
      result.results[0]!.reasonCode,
    );
    expect(await hostVersions(s)).toEqual({});
  });

  it("refuses tenant B's key used to claim tenant A (cross-tenant forgery)", async () => {
    const s = await registryStack();
    await expectRefused(s, sealed(one(), { ...B.key, tenant: A.id }), 'bad-signature');
  });

  it("refuses tenant B's own valid event that names tenant A's virtual cluster and namespace", async () => {
    const s = await registryStack();
    await expectRefused(s, sealed(one(), B.key), 'tenant-mismatch');
  });

  it("refuses a valid event of B that claims A's host namespace with B's name", async () => {
    const s = await registryStack();
    const e = { ...one(), virtualCluster: { name: B.id, namespace: HOST_NS } };
    await expectRefused(s, sealed(e, B.key), 'tenant-mismatch');
  });

  it.each([
    ['another tenant', `s3://${BUCKET}/${B.id}.yaml`],
    ['a local file', 'file:///proc/self/environ'],
    ['the function environment', 'file:///proc/self/cmdline'],
  ])('refuses an event that names %s as its configuration', async (_what, uri) => {
    const s = await registryStack();
    await expectRefused(s, sealed({ ...one(), config: uri }, A.key), 'tenant-mismatch');
  });

  it('refuses an event for a tenant the registry does not know', async () => {
    const s = await registryStack();
    const stranger = tenant('stranger');
    await expectRefused(s, sealed(one(), stranger.key), 'unknown-tenant');
  });

  it.each(['constructor', 'tostring', 'hasownproperty', 'prototype'])(
    'refuses the tenant id %j as unknown (no prototype lookups)',
    async (id) => {
      const s = await registryStack();
      await expectRefused(s, sealed(one(), { ...A.key, tenant: id }), 'unknown-tenant');
    },
  );

  it.each(['__proto__', 'toString', '..', 'a/b', '../tenants/team-b', 'A', 'a'.repeat(64)])(
    'refuses the malformed tenant id %j before the registry is read',
    async (id) => {
      const s = await registryStack();
      const payload = { ...sealed(one(), A.key), tenant: id };
      const raw = await s.invokeRaw(payload);
      expect(raw.functionError).toBe('Unhandled');
      expect(JSON.stringify(raw.payload)).toContain('tenant');
      expect(await hostVersions(s)).toEqual({});
    },
  );

  it('refuses a replay of a valid event, and a second copy of the same nonce', async () => {
    const s = await registryStack();
    const payload = sealed(one(), A.key);
    expect((await s.invoke(payload)).results[0]!.status).toBe('applied');
    const before = await hostVersions(s);
    const again = await s.invoke(payload);
    expect(again.results[0]).toMatchObject({ status: 'failed', reasonCode: 'replayed-event' });
    expect(await hostVersions(s)).toEqual(before);
    const sameNonce = sealed(one(), A.key, undefined, payload.nonce);
    expect((await s.invoke(sameNonce)).results[0]!.reasonCode).toBe('replayed-event');
  });

  it.each([
    ['an hour old', -3_600_000],
    ['an hour in the future', 3_600_000],
    ['six minutes old', -360_000],
  ])('refuses an event signed %s (retryable: a retry is signed anew)', async (_what, offset) => {
    const s = await registryStack();
    const payload = sealed(one(), A.key, Date.now() + offset);
    const result = await s.invoke(payload);
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'expired-signature',
      retryable: true,
    });
    expect(await hostVersions(s)).toEqual({});
  });

  it('rotation: a new key is accepted once added, both work during the rotation, the old one stops after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keys-'));
    const keysFile = join(dir, 'keys.json');
    await writeFile(keysFile, JSON.stringify(A.keysJson));
    const k2 = generateSigningKey(A.id, 'k2');
    const newKey = { tenant: A.id, keyId: 'k2', key: Buffer.from(k2.forwarder.key, 'base64') };
    try {
      const s = await registryStack({ [A.id]: entry(A, { signingKeys: `file:${keysFile}` }) });
      // The forwarder got k2 before the function side: refused, retryable.
      const early = await s.invoke(sealed(one(), newKey));
      expect(early.results[0]).toMatchObject({
        reasonCode: 'unknown-signing-key',
        retryable: true,
      });
      // The operator adds k2 beside k1; the function asks again for a key id it has not seen.
      await writeFile(keysFile, JSON.stringify({ ...A.keysJson, ...k2.function }));
      await new Promise((r) => setTimeout(r, 5_100)); // forced refreshes are at most every 5 s
      expect((await s.invoke(sealed(one(), newKey))).results[0]!.status).toBe('applied');
      const old = sealed(event([item('b', 'dc', endpoints('dc'))]), A.key);
      expect((await s.invoke(old)).results[0]!.status).toBe('applied');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 20_000);

  it('refuses an item of a resource the tenant may not sync', async () => {
    const s = await registryStack({ [A.id]: entry(A, { resources: ['secrets'] }) });
    await expectRefused(s, sealed(one(), A.key), 'resource-not-allowed');
  });

  it("never plans such an item, whatever its hint: the tenant's patches do not run on it", async () => {
    const inner = inProcessPlanner(createNativeEngine());
    const asked: string[] = [];
    const planner: Planner = {
      plan(input) {
        asked.push(input.resource);
        return inner.plan(input);
      },
      close: () => inner.close(),
    };
    const s = await registryStack({ [A.id]: entry(A, { resources: ['secrets'] }) }, { planner });
    const v1 = one();
    const hinted: SyncEventV2 = {
      version: 2,
      virtualCluster: v1.virtualCluster,
      items: v1.items.map((i) => ({ ...upgradeItem(i), hostCopy: 'unseen' })),
    };
    await expectRefused(s, sealed(hinted, A.key), 'resource-not-allowed');
    expect(asked).toEqual([]);
  });

  it('skips, without failing, the deleted Secret of a tenant that may not sync Secrets', async () => {
    const s = await registryStack({ [A.id]: entry(A, { resources: ['endpoints'] }) });
    const before = await hostVersions(s);
    const gone = item('a', 'creds', null, { resource: 'secrets' });
    const result = await s.invoke(sealed(event([gone]), A.key));
    expect(result.results[0]).toMatchObject({
      status: 'skipped',
      reasonCode: 'resource-not-allowed',
      hostWrites: [],
    });
    expect(await hostVersions(s)).toEqual(before);
    // A Secret that exists is still refused: only the deletion of a copy it cannot have is skipped.
    const present = item(
      'b',
      'creds',
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace: 'default' },
      },
      { resource: 'secrets' },
    );
    await expectRefused(s, sealed(event([present]), A.key), 'resource-not-allowed');
  });

  it("a tenant's deleted Secret never deletes another tenant's copy of a Secret of the same name", async () => {
    const s = await registryStack();
    // Tenant B's copy of its `default/creds`, in its own host namespace, and one B put in A's.
    const bCopy = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: `creds-x-default-x-${B.id}`,
        namespace: HOST_NS,
        labels: { 'virtualcluster.loft.sh/managed-by': B.id },
        annotations: {
          'virtualcluster.loft.sh/object-name': 'creds',
          'virtualcluster.loft.sh/object-namespace': 'default',
        },
      },
      data: { k: Buffer.from(CANARY).toString('base64') },
    };
    await s.host.create(RESOURCES.secrets, bCopy);
    // At the name A's copy would have, an object B marked as its own.
    await s.host.create(RESOURCES.secrets, {
      ...bCopy,
      metadata: { ...bCopy.metadata, name: `creds-x-default-x-${VC}` },
    });
    const before = await hostVersions(s);
    const gone = item('a', 'creds', null, { resource: 'secrets' });
    const r = (await s.invoke(sealed(event([gone]), A.key))).results[0]!;
    expect(r).toMatchObject({ status: 'unchanged', reasonCode: 'virtual-missing', hostWrites: [] });
    expect(r.reason).toContain(`managed by virtual cluster "${B.id}"`);
    expect(r.reason).not.toContain(CANARY);
    expect(await hostVersions(s)).toEqual(before);
  });

  it("refuses a configuration that maps a virtual namespace into another tenant's host namespace", async () => {
    const s = await registryStack();
    await s.store.put(
      BUCKET,
      CONFIG_KEY,
      `sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          default: team-b-host\n`,
    );
    const result = await s.invoke(sealed(one(), A.key));
    if (result.results[0]!.reasonCode === 'config-invalid') return; // the loader refused the mapping first
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-not-allowed',
    });
    expect(await hostVersions(s)).toEqual({});
  });

  it('refuses a registry entry whose configuration is a local file when local files are off', async () => {
    stack = await startStack({ tenants: registryOf(false) });
    await stack.store.put(
      BUCKET,
      `tenants/${A.id}.yaml`,
      entry(A, { config: 'file:///etc/passwd', signingKeys: 'secretsmanager:never-read' }),
    );
    const result = await stack.invoke(sealed(one(), A.key));
    // The entry fails at its keys (no AWS here) or at its config: the file is never read.
    expect(result.results[0]!.status).toBe('failed');
    expect(['registry-unavailable', 'config-not-allowed']).toContain(result.results[0]!.reasonCode);
    expect(result.results[0]!.reason).not.toContain('root:');
  });

  it('refuses inline signing keys in a registry when local files are off', async () => {
    stack = await startStack({ tenants: registryOf(false) });
    await stack.store.put(BUCKET, `tenants/${A.id}.yaml`, entry(A));
    const result = await stack.invoke(sealed(one(), A.key));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'registry-unavailable',
    });
    expect(result.results[0]!.reason).not.toContain(A.keysJson['k1']!);
  });

  it.each([
    ['not YAML', `tenant: [${CANARY}`],
    ['another tenant id inside', entry(A, { tenant: B.id })],
    ['unknown fields', entry(A, { extra: CANARY })],
    ['a bad host namespace pattern', entry(A, { hostNamespaces: ['*'] })],
    ['three active keys', entry(A, { signingKeys: `inline:{"a":"${CANARY}","b":"x","c":"y"}` })],
    [
      'a short key',
      entry(A, { signingKeys: `inline:{"k1":"${Buffer.from(CANARY).toString('base64')}"}` }),
    ],
    ['keys that are not JSON', entry(A, { signingKeys: `inline:${CANARY}` })],
    ['an alias', `a: &x ${CANARY}\ntenant: *x\n`],
  ])('refuses an event when its registry entry has %s, naming no secret', async (_what, text) => {
    const s = await registryStack({ [A.id]: text });
    await expectRefused(s, sealed(one(), A.key), 'registry-invalid');
  });

  it('logs refusals with the code and the claimed tenant, never event data', async () => {
    const lines = await capturedOutput(async () => {
      const s = await registryStack({}, { telemetry: { logLevel: 'INFO', metrics: false } });
      await s.invoke(
        sealed(event([item('a', 'db', endpoints('db', { labels: { x: CANARY } }))]), B.key),
      );
    });
    const text = lines.join('');
    expect(text).toContain('event refused');
    expect(text).toContain('tenant-mismatch');
    expect(text).not.toContain(CANARY);
  });
});

describe('a single-tenant function', () => {
  it('with signing keys refuses unsigned events and accepts signed ones', async () => {
    stack = await startStack({
      tenant: { signingKeys: `inline:${JSON.stringify(A.keysJson)}`, allowLocalFiles: true },
    });
    await expectRefused(stack, one(), 'unsigned-event');
    expect((await stack.invoke(sealed(one(), A.key))).results[0]!.status).toBe('applied');
  });

  it('without signing keys refuses a signed envelope it cannot check', async () => {
    stack = await startStack();
    await expectRefused(stack, sealed(one(), A.key), 'unexpected-signature');
  });

  it("refuses an event that names another virtual cluster's host namespace", async () => {
    stack = await startStack();
    const e = { ...one(), virtualCluster: { name: VC, namespace: 'team-b-host' } };
    await expectRefused(stack, e, 'tenant-mismatch');
  });

  it('refuses a marker domain the tenant does not own', async () => {
    stack = await startStack();
    const e = {
      ...one(),
      virtualCluster: { name: VC, namespace: HOST_NS, markerDomain: 'evil.example.com' },
    };
    await expectRefused(stack, e, 'tenant-mismatch');
  });
});

describe('the signing primitives', () => {
  it('any change to any signed field breaks the signature (property)', () => {
    const base = sealed(one(), A.key);
    fc.assert(
      fc.property(
        fc.constantFrom('tenant', 'keyId', 'issuedAt', 'nonce', 'event'),
        fc.string({ minLength: 1, maxLength: 8 }),
        (field, suffix) => {
          const changed = {
            ...base,
            [field]:
              field === 'issuedAt'
                ? base.issuedAt + suffix.length
                : `${base[field as 'event']}${suffix}`,
          } as SignedEvent;
          return !verifySignature(changed, A.key.key);
        },
      ),
      { numRuns: 300 },
    );
    expect(verifySignature(base, A.key.key)).toBe(true);
    expect(verifySignature(base, B.key.key)).toBe(false);
  });

  it('a signature of the wrong length is refused without throwing', () => {
    const base = sealed(one(), A.key);
    expect(verifySignature({ ...base, signature: 'AAAA' }, A.key.key)).toBe(false);
    expect(verifySignature({ ...base, signature: '' }, A.key.key)).toBe(false);
  });

  it('the replay guard keeps nonces per tenant and forgets them after the window', () => {
    let now = 1_000_000;
    const guard = new ReplayGuard({ windowMs: 1_000, now: () => now });
    expect(guard.check('a', 'n', now)).toBe('fresh');
    expect(guard.check('b', 'n', now)).toBe('fresh');
    expect(guard.check('a', 'n', now)).toBe('replayed');
    now += 5_000;
    expect(guard.check('a', 'n', now - 5_000)).toBe('expired');
    expect(guard.check('a', 'n2', now)).toBe('fresh');
    expect(guard.size).toBe(1);
  });

  it.each([
    ['not JSON', CANARY],
    ['a list', `["${CANARY}"]`],
    ['a short key', JSON.stringify({ k1: Buffer.from(CANARY).toString('base64') })],
    ['a bad key id', JSON.stringify({ [`${CANARY}/x`]: Buffer.alloc(32).toString('base64') })],
    ['no keys', '{}'],
  ])('a key set that is %s is refused without echoing it', (_what, text) => {
    expect(() => parseKeySet(text, 'test')).toThrow(/signing keys test/);
    try {
      parseKeySet(text, 'test');
    } catch (err) {
      expect((err as Error).message).not.toContain(CANARY);
    }
  });

  it.each([
    ['not JSON', CANARY],
    ['no tenant', JSON.stringify({ keyId: 'k', key: Buffer.alloc(32).toString('base64') })],
    [
      'a tenant that is a path',
      JSON.stringify({ tenant: '../x', keyId: 'k', key: Buffer.alloc(32).toString('base64') }),
    ],
    ['a key that is not base64', JSON.stringify({ tenant: 'a', keyId: 'k', key: `${CANARY}!` })],
  ])("the forwarder's key file that is %s is refused without echoing it", (_what, text) => {
    let message = '';
    try {
      parseForwarderKey(text, '/keys/key.json');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('/keys/key.json');
    expect(message).not.toContain(CANARY);
  });
});

describe('host namespace scopes', () => {
  it('allow exactly the names and prefixes given', () => {
    const scope = namespaceScope(['vc-a', 'team-a-*']);
    expect(scope.allows('vc-a')).toBe(true);
    expect(scope.allows('team-a-x')).toBe(true);
    expect(scope.allows('vc-a-x')).toBe(false);
    expect(scope.allows('team-b-x')).toBe(false);
    expect(scope.allows('kube-system')).toBe(false);
    expect(scope.allows('__proto__')).toBe(false);
  });

  it('patternsOverlap is true exactly when some namespace matches both (property)', () => {
    const label = fc.stringMatching(/^[a-x]{1,4}(-[a-x]{1,3})?$/);
    const pattern = fc.tuple(label, fc.boolean()).map(([l, p]) => (p ? `${l}*` : l));
    fc.assert(
      fc.property(pattern, pattern, fc.array(label, { maxLength: 5 }), (a, b, names) => {
        const sa = namespaceScope([a]);
        const sb = namespaceScope([b]);
        const candidates = [
          ...names,
          a.replace('*', ''),
          b.replace('*', ''),
          `${a.replace('*', '')}${b.replace('*', '')}`,
          `${b.replace('*', '')}${a.replace('*', '')}`,
        ];
        const witness = candidates.some((n) => sa.allows(n) && sb.allows(n));
        if (witness) return patternsOverlap(a, b);
        return true;
      }),
      { numRuns: 1000 },
    );
    expect(patternsOverlap('a-x-*', 'a-x-x-c')).toBe(true);
    expect(patternsOverlap('a-x-*', 'a-x-x-*')).toBe(true);
    expect(patternsOverlap('a-x-*', 'b-*')).toBe(false);
  });
});

describe('single tenant spec', () => {
  it('serves only its own tenant id', async () => {
    const gate = singleTenant({ name: VC, namespace: HOST_NS, config: 's3://b/k' });
    expect(await gate.registry.entry(VC)).toBeDefined();
    expect(await gate.registry.entry('other')).toBeUndefined();
    expect(await gate.registry.entry('__proto__')).toBeUndefined();
  });
});

/*
 * Round three (issue 32): what a tenant could still reach through the registry, the host's own
 * objects, the key store's failures and replays to another instance.
 */

const SHARED = 'shared-team-b';

/** A's configuration in multi-namespace mode: virtual `default` lands in `hostNamespace`. */
function mappedConfig(hostNamespace: string): string {
  return `sync:\n  toHost:\n    namespaces:\n      enabled: true\n      mappings:\n        byName:\n          default: ${hostNamespace}\n`;
}

/** Host Endpoints the endpoints controller made (its managed-by label), at `namespace/name`. */
function controllerEndpoints(namespace: string, name: string, ip: string) {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: {
      name,
      namespace,
      labels: { 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' },
    },
    subsets: [{ addresses: [{ ip }], ports: [{ port: 443, protocol: 'TCP' }] }],
  };
}

/** A host Service at `namespace/name`, with a selector or without one. */
function hostService(namespace: string, name: string, selector?: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { ports: [{ port: 443 }], ...(selector ? { selector } : {}) },
  };
}

function ipOf(object: KubeObject | undefined): unknown {
  const subsets = object?.['subsets'] as { addresses: { ip: string }[] }[] | undefined;
  return subsets?.[0]?.addresses[0]?.ip;
}

describe("round three: another tenant's control plane", () => {
  /** B's entry: its virtual cluster in `shared-team-b` (and `over`, such as a typo). */
  const entryOfB = (over: Record<string, unknown> = {}) =>
    entry(B, {
      virtualCluster: { name: B.id, namespace: SHARED },
      hostNamespaces: ['team-b-*'],
      ...over,
    });

  /** B's virtual cluster runs in `shared-team-b`; A may use `shared-*` and maps `default` there. */
  async function coveredStack(
    options: Parameters<typeof registryOf>[1] = {},
    aNamespaces = [HOST_NS, 'shared-*'],
    target = SHARED,
    bEntry = entryOfB(),
  ): Promise<Stack> {
    stack = await startStack({ tenants: registryOf(true, options) });
    const s = stack;
    await s.store.put(BUCKET, `tenants/${A.id}.yaml`, entry(A, { hostNamespaces: aNamespaces }));
    await s.store.put(BUCKET, `tenants/${B.id}.yaml`, bEntry);
    await s.store.put(BUCKET, CONFIG_KEY, mappedConfig(target));
    await s.hostCluster.create('namespaces', undefined, { metadata: { name: target } });
    // B's API-server Endpoints and Service, as its control plane keeps them.
    await s.hostCluster.create('services', target, hostService(target, 'team-b'));
    await s.hostCluster.create(
      'endpoints',
      target,
      controllerEndpoints(target, 'team-b', '10.9.9.9'),
    );
    return s;
  }

  const takeover = () => event([item('a', 'team-b', endpoints('team-b', { ip: '10.6.6.6' }))]);

  /** A's take-over of B's API-server Endpoints fails, naming B's control plane; nothing written. */
  async function expectTakeoverRefused(s: Stack): Promise<void> {
    const before = await s.hostCluster.get('endpoints', SHARED, 'team-b');
    const result = await s.invoke(sealed(takeover(), A.key));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-not-allowed',
      retryable: false,
    });
    expect(result.results[0]!.reason).toContain('control plane');
    const after = await s.hostCluster.get('endpoints', SHARED, 'team-b');
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(ipOf(after)).toBe('10.9.9.9');
  }

  it("refuses to take over, rewrite or delete B's API-server Endpoints through A's pattern", async () => {
    const s = await coveredStack();
    await expectTakeoverRefused(s);
    const gone = sealed(event([item('b', 'team-b', null)]), A.key);
    expect((await s.invoke(gone)).results[0]!.reasonCode).toBe('namespace-not-allowed');
    expect(await s.hostCluster.peek('endpoints', SHARED, 'team-b')).toBeDefined();
  });

  it("an entry that does not parse (one unknown field) still protects its tenant's control plane", async () => {
    const broken = entryOfB({ typo: true });
    expect(() => parseTenantEntry(broken, 'b.yaml')).toThrow(/invalid/);
    const s = await coveredStack({}, undefined, undefined, broken);
    await expectTakeoverRefused(s);
    // The operator's check names the broken entry.
    const io = bufferIO({ 'b.yaml': broken });
    expect(await main(['tenants', 'check', 'b.yaml'], io)).toBe(1);
    expect(io.err).toMatch(/b\.yaml.*invalid.*typo/);
  });

  it('an entry whose control-plane namespace cannot be read at all fails the index closed', async () => {
    for (const unreadable of [
      entryOfB().slice(0, 40), // cut short: not YAML
      entryOfB({ virtualCluster: { name: B.id } }), // no namespace
      entryOfB({ virtualCluster: { name: B.id, namespace: 'Not A Namespace' } }),
    ]) {
      const s = await coveredStack({}, undefined, undefined, unreadable);
      const result = await s.invoke(sealed(takeover(), A.key));
      expect(result.results[0]).toMatchObject({
        status: 'failed',
        reasonCode: 'registry-unavailable',
        retryable: true,
      });
      const after = await s.hostCluster.get('endpoints', SHARED, 'team-b');
      expect(ipOf(after)).toBe('10.9.9.9');
      await s.close();
      stack = undefined;
    }
  });

  it('reads the control plane of a broken entry loosely, and never anything but a namespace name', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    fc.assert(
      fc.property(label, fc.dictionary(fc.string(), fc.jsonValue()), (namespace, extra) => {
        const text = entryOfB({ ...extra, virtualCluster: { name: B.id, namespace } });
        expect(looseControlPlaneOf(text)).toBe(namespace);
      }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const namespace = looseControlPlaneOf(text);
        if (namespace !== undefined)
          expect(namespace).toMatch(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
      }),
    );
  });

  it('a registry listing longer than the lister reads fails closed instead of dropping entries', async () => {
    const keys = ['a', 'b', 'c', 'd'].map((k) => ({ Key: `tenants/${k}.yaml` }));
    const pages = async (input: { ContinuationToken?: string }) => {
      const at = Number(input.ContinuationToken ?? 0);
      return {
        Contents: keys.slice(at, at + 2),
        IsTruncated: at + 2 < keys.length,
        NextContinuationToken: String(at + 2),
      };
    };
    expect(await objectLister(pages, false, 4)('s3://b/tenants/')).toHaveLength(4);
    await expect(objectLister(pages, false, 3)('s3://b/tenants/')).rejects.toBeInstanceOf(
      ListingTooLargeError,
    );
    const dir = await mkdtemp(join(tmpdir(), 'registry-'));
    try {
      for (const k of ['a', 'b', 'c']) await writeFile(join(dir, `${k}.yaml`), '{}');
      const list = objectLister(pages, true, 2);
      await expect(list(pathToFileURL(`${dir}/`).href)).rejects.toBeInstanceOf(
        ListingTooLargeError,
      );
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('refuses a namespace of the platform list, whatever the entry says', async () => {
    const s = await coveredStack(
      { protectedNamespaces: ['platform-*'] },
      [HOST_NS, 'platform-ingress'],
      'platform-ingress',
    );
    const result = await s.invoke(sealed(takeover(), A.key));
    expect(result.results[0]).toMatchObject({
      status: 'failed',
      reasonCode: 'namespace-not-allowed',
    });
    expect(ipOf(await s.hostCluster.get('endpoints', 'platform-ingress', 'team-b'))).toBe(
      '10.9.9.9',
    );
  });

  it("the registry's index is rebuilt in the background, and refused once too old to trust", async () => {
    let now = 1_000_000;
    let listing: string[] = [`file:///r/${A.id}.yaml`];
    let lists = 0;
    let failing = false;
    const texts: Record<string, string> = {
      [`file:///r/${A.id}.yaml`]: entry(A),
      [`file:///r/${B.id}.yaml`]: entry(B, { virtualCluster: { name: B.id, namespace: SHARED } }),
    };
    const registry = new StoreTenantRegistry(
      'file:///r/',
      async (uri) => texts[uri],
      async () => '{}',
      { now: () => now },
      async () => {
        lists++;
        if (failing) throw new Error('store down');
        return listing;
      },
    );
    expect([...(await registry.index()).controlPlanes.keys()]).toEqual([HOST_NS]);
    listing = [...listing, `file:///r/${B.id}.yaml`];
    now += 31_000;
    // Past its cache time the index still answers at once, and a new one is built meanwhile.
    expect([...(await registry.index()).controlPlanes.keys()]).toEqual([HOST_NS]);
    await vi.waitFor(async () =>
      expect([...(await registry.index()).controlPlanes.keys()]).toContain(SHARED),
    );
    expect(lists).toBe(2);
    failing = true;
    now += 301_000;
    await expect(registry.index()).rejects.toBeInstanceOf(RegistryUnavailableError);
  });

  it('tenants check reports a host namespace pattern covering another tenant control plane', async () => {
    const io = bufferIO({
      'a.yaml': entry(A, { hostNamespaces: [HOST_NS, 'shared-*'] }),
      'b.yaml': entry(B, {
        virtualCluster: { name: B.id, namespace: SHARED },
        hostNamespaces: ['team-b-*'],
      }),
    });
    expect(await main(['tenants', 'check', 'a.yaml', 'b.yaml'], io)).toBe(1);
    expect(io.err).toContain(`shared-* (${A.id}) covers ${SHARED}`);
    const platform = bufferIO({ 'a.yaml': entry(A, { hostNamespaces: [HOST_NS, 'ingress'] }) });
    expect(
      await main(
        ['tenants', 'check', '--protected-namespaces', 'ingress,kube-*', 'a.yaml'],
        platform,
      ),
    ).toBe(1);
    expect(platform.err).toContain('ingress');
  });
});

describe('round three: take-overs and first slices read the host Service', () => {
  const copy = hostNameOf('db');

  async function withHost(service: ReturnType<typeof hostService> | undefined): Promise<Stack> {
    stack = await startStack();
    if (service) await stack.hostCluster.create('services', HOST_NS, service);
    await stack.hostCluster.create(
      'endpoints',
      HOST_NS,
      controllerEndpoints(HOST_NS, copy, '10.9.9.9'),
    );
    return stack;
  }

  it.each([
    ['has a selector', hostService(HOST_NS, copy, { app: 'db' })],
    ['does not exist', undefined],
  ])(
    'refuses to take over controller-made Endpoints when the host Service %s, the forwarder claiming otherwise',
    async (_what, service) => {
      const s = await withHost(service);
      const before = await hostVersions(s);
      const result = await s.invoke(one());
      // Retryable: the virtual cluster's syncer may drop the host Service's selector later.
      expect(result.results[0]).toMatchObject({
        status: 'failed',
        reasonCode: 'conflict',
        retryable: true,
      });
      expect(result.results[0]!.reason).toContain('host Service');
      expect(await hostVersions(s)).toEqual(before);
      expect(ipOf(await s.hostCluster.get('endpoints', HOST_NS, copy))).toBe('10.9.9.9');
    },
  );

  it('takes over when the host Service exists without a selector', async () => {
    const s = await withHost(hostService(HOST_NS, copy));
    const result = await s.invoke(one());
    expect(result.results[0]).toMatchObject({ status: 'applied', reasonCode: 'taken-over' });
  });

  it("refuses a slice's first create for a host Service with a selector", async () => {
    stack = await startStack();
    await stack.hostCluster.create('services', HOST_NS, hostService(HOST_NS, copy, { app: 'db' }));
    const slice = endpointSlice('10.6.6.6');
    const result = await stack.invoke({
      version: 2,
      virtualCluster: { name: VC, namespace: HOST_NS },
      items: [
        {
          id: 's',
          direction: 'toHost',
          key: { resource: 'endpointslices', namespace: 'default', name: 'db-abc' },
          virtualObject: slice,
          companions: [
            {
              key: { resource: 'services', namespace: 'default', name: 'db' },
              object: service('db'),
            },
          ],
        },
      ],
    });
    expect(result.results[0]).toMatchObject({
      status: 'skipped',
      reasonCode: 'service-has-selector',
      hostWrites: [],
    });
    expect(await stack.hostCluster.list('endpointslices', HOST_NS)).toEqual([]);
  });

  it('refuses a slice update that relabels its copy onto a host Service with a selector', async () => {
    stack = await startStack();
    const s = stack;
    await s.hostCluster.create(
      'services',
      HOST_NS,
      hostService(HOST_NS, hostNameOf('web'), { app: 'web' }),
    );
    const sliceFor = (serviceName: string) => {
      const slice = endpointSlice('10.6.6.6');
      slice.metadata.labels = { 'kubernetes.io/service-name': serviceName };
      return {
        version: 2,
        virtualCluster: { name: VC, namespace: HOST_NS },
        items: [
          {
            id: 's',
            direction: 'toHost',
            key: { resource: 'endpointslices', namespace: 'default', name: 'db-abc' },
            virtualObject: slice,
            companions: [
              {
                key: { resource: 'services', namespace: 'default', name: serviceName },
                object: service(serviceName),
              },
            ],
          },
        ],
      };
    };
    expect((await s.invoke(sliceFor('db'))).results[0]!.status).toBe('applied');
    // The forwarder claims `web` has no selector; the host Service says otherwise.
    const relabel = (await s.invoke(sliceFor('web'))).results[0]!;
    expect(relabel).toMatchObject({
      status: 'skipped',
      reasonCode: 'service-has-selector',
      hostWrites: [],
    });
    const [copy] = await s.hostCluster.list('endpointslices', HOST_NS);
    expect(copy!.metadata.labels?.['kubernetes.io/service-name']).toBe(hostNameOf('db'));
  });
});

describe('round three: signing keys', () => {
  it('refuses both tenants when two registry entries name the same signing keys', async () => {
    const shared = `inline:${JSON.stringify(A.keysJson)}`;
    const s = await registryStack({ [B.id]: entry(B, { signingKeys: shared }) });
    const forged = sealed(
      { ...one(), virtualCluster: { name: A.id, namespace: HOST_NS } },
      { ...A.key, tenant: A.id },
    );
    await expectRefused(s, forged, 'registry-invalid');
    const bOwn = sealed(
      { ...one(), virtualCluster: { name: B.id, namespace: `${B.id}-host` } },
      { ...A.key, tenant: B.id },
    );
    const r = (await s.invoke(bOwn)).results[0]!;
    expect(r).toMatchObject({ status: 'failed', reasonCode: 'registry-invalid' });
    expect(r.reason).toContain('same signing keys');
    expect(r.reason).not.toContain(A.keysJson['k1']!);
  });

  it('refuses both tenants once the same key turns up under two references', async () => {
    const copied = `inline:${JSON.stringify({ k9: A.keysJson['k1'] })}`;
    const s = await registryStack({ [B.id]: entry(B, { signingKeys: copied }) });
    // A alone: nothing shows that its key is anyone else's yet.
    expect((await s.invoke(sealed(one(), A.key))).results[0]!.status).toBe('applied');
    const asB = sealed(
      { ...one(), virtualCluster: { name: B.id, namespace: `${B.id}-host` } },
      { tenant: B.id, keyId: 'k9', key: A.key.key },
    );
    const b = (await s.invoke(asB)).results[0]!;
    expect(b).toMatchObject({ status: 'failed', reasonCode: 'registry-invalid' });
    expect(b.reason).toContain('another registry entry');
    expect(b.reason).not.toContain(A.keysJson['k1']!);
    // From then on A is refused too: B's forwarder could sign as A.
    const again = sealed(event([item('b', 'dc', endpoints('dc'))]), A.key);
    await expectRefused(s, again, 'registry-invalid');
  });

  it('tenants check reports two entries naming the same signing keys', async () => {
    const io = bufferIO({
      'a.yaml': entry(A, { signingKeys: 'secretsmanager:endpoint-sync/tenants/shared' }),
      'b.yaml': entry(B, { signingKeys: 'secretsmanager:endpoint-sync/tenants/shared' }),
    });
    expect(await main(['tenants', 'check', 'a.yaml', 'b.yaml'], io)).toBe(1);
    expect(io.err).toContain('same signing keys');
  });

  it('stops trusting cached keys past a bound while the key store fails, and backs off', async () => {
    let now = 1_000_000;
    let failing = false;
    let reads = 0;
    const registry = new StoreTenantRegistry(
      'file:///registry/',
      async () => undefined,
      async () => {
        reads++;
        if (failing) throw new Error('store down');
        return JSON.stringify(A.keysJson);
      },
      { now: () => now },
    );
    const a = parseTenantEntry(entry(A), 'a.yaml');
    expect((await registry.signingKeys(a)).has('k1')).toBe(true);
    failing = true;
    now += 61_000; // past the cache time: the store is asked, fails, the keys still serve
    expect((await registry.signingKeys(a)).has('k1')).toBe(true);
    const afterFailure = reads;
    for (let i = 0; i < 50; i++) await registry.signingKeys(a);
    expect(reads - afterFailure).toBeLessThanOrEqual(1); // backed off, not 50 reads
    now += 3_600_000; // an hour later the removed key must not verify any more
    await expect(registry.signingKeys(a)).rejects.toBeInstanceOf(RegistryUnavailableError);
    failing = false;
    now += 60_000;
    expect((await registry.signingKeys(a)).has('k1')).toBe(true);
  });
});

describe('round three: replays to another instance or after a restart', () => {
  it('refuses an older signed event for a copy a newer one wrote: no rollback, no delete', async () => {
    const s = await registryStack();
    const now = Date.now();
    const older = sealed(
      event([item('a', 'db', endpoints('db', { ip: '10.0.0.1' }))]),
      A.key,
      now - 60_000,
    );
    const newer = sealed(event([item('a', 'db', endpoints('db', { ip: '10.0.0.2' }))]), A.key, now);
    expect((await s.invoke(newer)).results[0]!.status).toBe('applied');
    const before = await hostVersions(s);
    const rollback = (await s.invoke(older)).results[0]!;
    expect(rollback).toMatchObject({ status: 'failed', reasonCode: 'stale-event', hostWrites: [] });
    const deletion = sealed(event([item('b', 'db', null)]), A.key, now - 30_000);
    expect((await s.invoke(deletion)).results[0]!.reasonCode).toBe('stale-event');
    expect(await hostVersions(s)).toEqual(before);
    expect(ipOf(await s.hostCluster.get('endpoints', HOST_NS, hostNameOf('db')))).toBe('10.0.0.2');
    // A later event still applies (and a later deletion deletes).
    const later = sealed(event([item('c', 'db', null)]), A.key, now + 1_000);
    expect((await s.invoke(later)).results[0]!.status).toBe('applied');
  });
});

describe('round three: replays of a referenced Secret', () => {
  it("refuses an older event's write of a Secret copy a newer event wrote: its data is not rolled back", async () => {
    const s = await registryStack();
    const withSecret = (password: string) =>
      event([
        item('a', 'db', endpoints('db', { annotations: { 'example.com/secret': 'creds' } }), {
          references: [
            { ...credsSecret(), data: { password: Buffer.from(password).toString('base64') } },
          ],
        }),
      ]);
    const now = Date.now();
    const newer = (await s.invoke(sealed(withSecret('new-password'), A.key, now))).results[0]!;
    expect(newer.status).toBe('applied');
    const copyName = newer.hostWrites.find((w) => w.resource === 'secrets')!.name;
    const before = await hostVersions(s);
    const older = (await s.invoke(sealed(withSecret('old-password'), A.key, now - 60_000)))
      .results[0]!;
    expect(older).toMatchObject({ status: 'failed', reasonCode: 'stale-event', hostWrites: [] });
    expect(older.reason).toContain(`secrets ${HOST_NS}/${copyName}`);
    expect(await hostVersions(s)).toEqual(before);
    const copy = await s.hostCluster.get('secrets', HOST_NS, copyName);
    expect((copy['data'] as Record<string, string>)['password']).toBe(
      Buffer.from('new-password').toString('base64'),
    );
  });

  it('does not park a new object naming a shared Secret copy a later-signed event of another object wrote', async () => {
    const s = await registryStack();
    const naming = (id: string, name: string) =>
      event([
        item(id, name, endpoints(name, { annotations: { 'example.com/secret': 'creds' } }), {
          references: [credsSecret()],
        }),
      ]);
    const now = Date.now();
    expect((await s.invoke(sealed(naming('w', 'web'), A.key, now))).results[0]!.status).toBe(
      'applied',
    );
    // db's event was signed a second earlier but reaches the host later (invocations in flight).
    const db = (await s.invoke(sealed(naming('d', 'db'), A.key, now - 1_000))).results[0]!;
    expect(db).toMatchObject({ status: 'failed', reasonCode: 'stale-event', retryable: true });
    expect(await s.hostCluster.peek('endpoints', HOST_NS, hostNameOf('db'))).toBeUndefined();
    // The forwarder's retry is built from its cache and signed anew: it applies.
    const retry = (await s.invoke(sealed(naming('d', 'db'), A.key, now + 1_000))).results[0]!;
    expect(retry.status).toBe('applied');
    expect(await s.hostCluster.peek('endpoints', HOST_NS, hostNameOf('db'))).toBeDefined();
  });
});

describe('round three: nonces, unknown tenants and the claimed tenant', () => {
  it("one tenant's traffic never evicts another tenant's nonces", () => {
    const now = 1_000_000;
    const guard = new ReplayGuard({ windowMs: 60_000, maxNonces: 10, now: () => now });
    expect(guard.check('a', 'n0', now)).toBe('fresh');
    for (let i = 0; i < 50; i++) guard.check('b', `n${i}`, now);
    expect(guard.check('a', 'n0', now)).toBe('replayed');
  });

  it('unknown tenant ids are cached apart and never evict known entries', async () => {
    const reads: string[] = [];
    const registry = new StoreTenantRegistry(
      'file:///registry/',
      async (uri) => {
        reads.push(uri);
        return uri.endsWith(`/${A.id}.yaml`) ? entry(A) : undefined;
      },
      async () => JSON.stringify(A.keysJson),
      { maxEntries: 5 },
    );
    expect(await registry.entry(A.id)).toBeDefined();
    for (let i = 0; i < 20; i++) expect(await registry.entry(`stranger-${i}`)).toBeUndefined();
    expect(await registry.entry(A.id)).toBeDefined();
    expect(reads.filter((u) => u.endsWith(`/${A.id}.yaml`))).toHaveLength(1);
    const count = reads.length;
    await registry.entry('stranger-19');
    expect(reads).toHaveLength(count);
  });

  it('logs an unproven tenant as claimedTenant, never as tenant', async () => {
    const lines = await capturedOutput(async () => {
      const s = await registryStack({}, { telemetry: { logLevel: 'INFO', metrics: false } });
      await s.invoke(sealed(one(), { ...B.key, tenant: A.id }));
    });
    const refused = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.includes('event refused'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused) {
      expect(line['claimedTenant']).toBe(A.id);
      expect(line['tenant']).toBeUndefined();
    }
  });
});

describe('round three: the platform list and the dry run', () => {
  it('PROTECTED_NAMESPACES is read from the environment and a malformed item is refused by name', () => {
    const env = { TENANT_REGISTRY: 's3://platform/tenants/' };
    expect(
      settingsFromEnv({ ...env, PROTECTED_NAMESPACES: ' ingress , monitoring-* ' }),
    ).toMatchObject({ protectedNamespaces: ['ingress', 'monitoring-*'] });
    expect(settingsFromEnv(env).protectedNamespaces).toEqual([]);
    expect(() => settingsFromEnv({ ...env, PROTECTED_NAMESPACES: `ok,${CANARY}` })).toThrow(
      /PROTECTED_NAMESPACES.*item 2/,
    );
    try {
      settingsFromEnv({ ...env, PROTECTED_NAMESPACES: `ok,${CANARY}` });
    } catch (err) {
      expect((err as Error).message).not.toContain(CANARY);
    }
  });

  it('plan --help says that a kubeconfig exec credential plugin runs, as with kubectl', async () => {
    const io = bufferIO();
    await main(['plan', '--help'], io);
    expect(io.out).toMatch(/exec credential plugin[\s\S]*runs that command on this machine/);
  });
});

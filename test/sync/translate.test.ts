/**
 * The generic translation (docs/sync.md, "Names" and "Metadata of the host copy"): names, metadata,
 * markers, reserved label keys, Pod targetRefs, and the managed check.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/model/index.ts';
import { hostName, shortName, translateLabelKey } from '../../lib/naming/index.ts';
import { syncContext } from '../../lib/sync/context.ts';
import { managedState } from '../../lib/sync/managed.ts';
import { hostKeyOf } from '../../lib/sync/namespaces.ts';
import {
  finishForHost,
  importFromHost,
  prepareForHost,
  prepareFromHost,
} from '../../lib/sync/translate.ts';
import { config, DOMAIN, endpoints, identity, secret } from './fixtures.ts';

const ctx = syncContext(identity, config());

function toHost(
  virtual = endpoints('db', 'default', { labels: { app: 'db' }, annotations: { note: 'x' } }),
) {
  const key = hostKeyOf('Endpoints', { namespace: 'default', name: 'db' }, identity, ctx.config);
  return finishForHost(prepareForHost(virtual, 'Endpoints', ctx), virtual, 'Endpoints', key, ctx);
}

describe('toHost translation', () => {
  it('names the copy by the naming rules in the host namespace', () => {
    const host = toHost();
    expect(host.metadata.name).toBe(hostName('db', 'default', 'vc'));
    expect(host.metadata.name).toBe('db-x-default-x-vc');
    expect(host.metadata.namespace).toBe('vc-host');
  });

  it('resets server-set metadata', () => {
    const virtual = endpoints();
    Object.assign(virtual.metadata, {
      generation: 3,
      deletionTimestamp: '2024-01-01T00:00:00Z',
      deletionGracePeriodSeconds: 30,
      ownerReferences: [{ kind: 'X' }],
      finalizers: ['f'],
      managedFields: [{}],
      generateName: 'db-',
      selfLink: '/x',
    });
    const meta = toHost(virtual).metadata;
    for (const field of [
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'ownerReferences',
      'finalizers',
      'managedFields',
      'generateName',
      'selfLink',
    ]) {
      expect(meta, field).not.toHaveProperty(field);
    }
  });

  it('sets exactly the marker annotations and labels of 3.3', () => {
    const host = toHost();
    const last = JSON.stringify({ annotations: { note: 'x' }, labels: { app: 'db' } });
    expect(host.metadata.annotations).toEqual({
      note: 'x',
      [`${DOMAIN}/object-name`]: 'db',
      [`${DOMAIN}/object-namespace`]: 'default',
      [`${DOMAIN}/object-uid`]: 'uid-db',
      [`${DOMAIN}/object-kind`]: '/v1, Kind=Endpoints',
      [`${DOMAIN}/object-host-name`]: 'db-x-default-x-vc',
      [`${DOMAIN}/object-host-namespace`]: 'vc-host',
      [`${DOMAIN}/managed-annotations`]: 'note',
      [`${DOMAIN}/last-applied`]: last,
    });
    expect(host.metadata.labels).toEqual({
      app: 'db',
      [`${DOMAIN}/managed-by`]: 'vc',
      [`${DOMAIN}/namespace`]: 'default',
    });
  });

  it('sorts and newline-joins managed-annotations', () => {
    const host = toHost(endpoints('db', 'default', { annotations: { b: '1', a: '2' } }));
    expect(host.metadata.annotations?.[`${DOMAIN}/managed-annotations`]).toBe('a\nb');
  });

  it('drops the leader annotation and does not set skip-mirror', () => {
    const host = toHost(
      endpoints('db', 'default', {
        annotations: { 'control-plane.alpha.kubernetes.io/leader': 'x' },
      }),
    );
    expect(host.metadata.annotations).not.toHaveProperty(
      'control-plane.alpha.kubernetes.io/leader',
    );
    expect(host.metadata.annotations).not.toHaveProperty('endpointslice.kubernetes.io/skip-mirror');
  });

  it('renames reserved label keys and never lets a virtual label fake a marker', () => {
    const host = toHost(
      endpoints('db', 'default', { labels: { release: 'r1', [`${DOMAIN}/managed-by`]: 'evil' } }),
    );
    expect(host.metadata.labels?.[translateLabelKey('release', 'vc', DOMAIN)]).toBe('r1');
    expect(host.metadata.labels?.[translateLabelKey(`${DOMAIN}/managed-by`, 'vc', DOMAIN)]).toBe(
      'evil',
    );
    expect(host.metadata.labels?.[`${DOMAIN}/managed-by`]).toBe('vc');
    expect(host.metadata.labels).not.toHaveProperty('release');
  });

  it('never copies marker annotations the virtual object carries', () => {
    const host = toHost(
      endpoints('db', 'default', { annotations: { [`${DOMAIN}/object-name`]: 'forged' } }),
    );
    expect(host.metadata.annotations?.[`${DOMAIN}/object-name`]).toBe('db');
    expect(host.metadata.annotations).not.toHaveProperty(`${DOMAIN}/managed-annotations`);
  });

  it('translates Pod targetRefs in addresses and notReadyAddresses and clears uid/resourceVersion', () => {
    const virtual = endpoints();
    (virtual['subsets'] as Record<string, unknown>[])[0]!['notReadyAddresses'] = [
      { ip: '10.0.0.9', targetRef: { kind: 'Pod', name: 'db-1', uid: 'u', resourceVersion: '1' } },
      { ip: '10.0.0.8', targetRef: { kind: 'Node', name: 'n1' } },
    ];
    const subset = (toHost(virtual)['subsets'] as Record<string, { targetRef: unknown }[]>[])[0]!;
    expect(subset['addresses']![0]!.targetRef).toEqual({
      kind: 'Pod',
      name: 'db-0-x-default-x-vc',
      namespace: 'vc-host',
    });
    expect(subset['notReadyAddresses']![0]!.targetRef).toEqual({
      kind: 'Pod',
      name: 'db-1-x-default-x-vc',
      namespace: 'vc-host',
    });
    expect(subset['notReadyAddresses']![1]!.targetRef).toEqual({ kind: 'Node', name: 'n1' });
  });

  it('does not change its input', () => {
    const virtual = endpoints();
    const before = structuredClone(virtual);
    toHost(virtual);
    expect(virtual).toEqual(before);
  });

  it('uses the marker domain setting', () => {
    const other = syncContext({ ...identity, markerDomain: 'example.com' }, config());
    const v = endpoints();
    const key = hostKeyOf(
      'Endpoints',
      { namespace: 'default', name: 'db' },
      identity,
      other.config,
    );
    const host = finishForHost(prepareForHost(v, 'Endpoints', other), v, 'Endpoints', key, other);
    expect(host.metadata.labels?.['example.com/managed-by']).toBe('vc');
  });

  it("gives Secrets and ConfigMaps (reference targets) the specification's short name, and vcluster's long one with hostNames: long", () => {
    const who = { ...identity, name: 'my-vcluster' };
    const key = { namespace: 'default', name: 'my-secret' };
    const long = config(
      'sync:\n  toHost:\n    secrets: {hostNames: long}\n    configMaps: {hostNames: long}\n',
    );
    for (const kind of ['Secret', 'ConfigMap']) {
      expect(hostKeyOf(kind, key, who, ctx.config)).toEqual({
        namespace: 'vc-host',
        name: 'v5ri45ovgqam9c',
      });
      expect(hostKeyOf(kind, key, who, long)).toEqual({
        namespace: 'vc-host',
        name: 'my-secret-x-default-x-my-vcluster',
      });
    }
  });

  it('gives the kinds vcluster names short (ResourceClaims) the short name', () => {
    expect(
      hostKeyOf(
        'ResourceClaim',
        { namespace: 'default', name: 'my-secret' },
        { ...identity, name: 'my-vcluster' },
        ctx.config,
      ),
    ).toEqual({
      namespace: 'vc-host',
      name: 'v5ri45ovgqam9c',
    });
    expect(shortName('my-secret', 'default', 'my-vcluster')).toBe('v5ri45ovgqam9c');
  });
});

describe('multi-namespace mode', () => {
  const multi = config(
    'sync: {toHost: {namespaces: {enabled: true, mappings: {byName: {team-a: a-host}}}}}',
  );
  it('keeps names and maps namespaces (explicit mapping, else vc-x-<namespace>)', () => {
    expect(hostKeyOf('Endpoints', { namespace: 'team-a', name: 'db' }, identity, multi)).toEqual({
      namespace: 'a-host',
      name: 'db',
    });
    expect(hostKeyOf('Endpoints', { namespace: 'team-b', name: 'db' }, identity, multi)).toEqual({
      namespace: 'vc-x-team-b',
      name: 'db',
    });
    expect(hostKeyOf('Secret', { namespace: 'team-b', name: 's' }, identity, multi)).toEqual({
      namespace: 'vc-x-team-b',
      name: 's',
    });
  });
});

describe('host -> virtual', () => {
  it('strips markers and restores renamed label keys', () => {
    const host = toHost(
      endpoints('db', 'default', {
        labels: { release: 'r1', app: 'db' },
        annotations: { note: 'x' },
      }),
    );
    const back = prepareFromHost(host, ctx);
    expect(back.metadata.labels).toEqual({ release: 'r1', app: 'db' });
    expect(back.metadata.annotations).toEqual({ note: 'x' });
  });

  it('recognises its own copies', () => {
    expect(managedState(toHost(), 'Endpoints', ctx)).toEqual({
      managed: true,
      virtualKey: { namespace: 'default', name: 'db' },
    });
  });

  it('rejects a copy whose name is not what the naming rules give for the recorded key', () => {
    const host = toHost();
    host.metadata.annotations![`${DOMAIN}/object-name`] = 'other';
    expect(managedState(host, 'Endpoints', ctx)).toMatchObject({ managed: false });
  });

  it('rejects a copy of another virtual cluster or without records', () => {
    const host = toHost();
    expect(
      managedState(
        { ...host, metadata: { ...host.metadata, labels: { [`${DOMAIN}/managed-by`]: 'x' } } },
        'Endpoints',
        ctx,
      ),
    ).toMatchObject({ managed: false });
    expect(
      managedState({ ...host, metadata: { ...host.metadata, annotations: {} } }, 'Endpoints', ctx),
    ).toMatchObject({ managed: false });
  });

  it('imports a host-only object marked controlled-by with its host original', () => {
    const hostSecret: KubeObject = {
      ...secret('shared', 'vc-host'),
      metadata: { name: 'shared', namespace: 'vc-host', uid: 'h1', resourceVersion: '4' },
    };
    const imported = importFromHost(
      hostSecret,
      'Secret',
      { namespace: 'default', name: 'shared' },
      ctx,
    );
    expect(imported.metadata).toEqual({
      name: 'shared',
      namespace: 'default',
      labels: { [`${DOMAIN}/controlled-by`]: 'endpoint-sync-import' },
      annotations: {
        [`${DOMAIN}/object-host-name`]: 'shared',
        [`${DOMAIN}/object-host-namespace`]: 'vc-host',
      },
    });
    expect(imported['data']).toEqual(hostSecret['data']);
  });
});

import { describe, expect, it } from 'vitest';
import { shortName } from '../../lib/naming/index.ts';
import {
  ReferenceUnresolvedError,
  singleNamespaceReferences,
} from '../../lib/patches/references.ts';
import { type ObjectRef, ReferenceDeniedError } from '../../lib/patches/types.ts';

const secret = (name: string, namespace: string): ObjectRef => ({
  apiVersion: 'v1',
  kind: 'Secret',
  name,
  namespace,
});

describe('singleNamespaceReferences', () => {
  it('maps a virtual reference to its short name in the host namespace', () => {
    const refs = singleNamespaceReferences({
      virtualClusterName: 'my-vcluster',
      hostNamespace: 'vc-ns',
    });
    expect(refs.toHost(secret('my-secret', 'default'))).toEqual(secret('v5ri45ovgqam9c', 'vc-ns'));
    expect(refs.toHost(secret('my-secret', 'kube-system'))).toEqual(
      secret(shortName('my-secret', 'kube-system', 'my-vcluster'), 'vc-ns'),
    );
  });

  it('maps a host reference back through the lookup', () => {
    const lookups: ObjectRef[] = [];
    const refs = singleNamespaceReferences({
      virtualClusterName: 'my-vcluster',
      hostNamespace: 'vc-ns',
      lookup: (ref) => {
        lookups.push(ref);
        return ref.name === 'v5ri45ovgqam9c' ? secret('my-secret', 'default') : undefined;
      },
      importNamespace: 'team-a',
    });
    expect(refs.fromHost(secret('v5ri45ovgqam9c', 'vc-ns'))).toEqual(
      secret('my-secret', 'default'),
    );
    expect(lookups).toEqual([secret('v5ri45ovgqam9c', 'vc-ns')]);
    // Exists only on the host: imported under its host name into the referencing namespace.
    expect(refs.fromHost(secret('shared-ca', 'vc-ns'))).toEqual(secret('shared-ca', 'team-a'));
  });

  it('denies host references outside the host namespace, naming the namespace', () => {
    const refs = singleNamespaceReferences({
      virtualClusterName: 'vc',
      hostNamespace: 'vc-ns',
      importNamespace: 'default',
    });
    const attempt = () => refs.fromHost(secret('admin-token', 'kube-system'));
    expect(attempt).toThrow(ReferenceDeniedError);
    expect(attempt).toThrow(/"kube-system"/);
    expect(attempt).toThrow(/may only reach the virtual cluster's host namespace "vc-ns"/);
    try {
      attempt();
    } catch (error) {
      expect((error as ReferenceDeniedError).ref).toEqual(secret('admin-token', 'kube-system'));
    }
    expect(() => refs.fromHost(secret('x', 'other-tenant'))).toThrow(ReferenceDeniedError);
  });

  it('denies the system namespaces even when the cluster runs in one', () => {
    const refs = singleNamespaceReferences({
      virtualClusterName: 'vc',
      hostNamespace: 'kube-system',
      importNamespace: 'default',
    });
    expect(() => refs.fromHost(secret('x', 'kube-system'))).toThrow(ReferenceDeniedError);
  });

  it('fails clearly when a host-only object has nowhere to go', () => {
    const refs = singleNamespaceReferences({ virtualClusterName: 'vc', hostNamespace: 'vc-ns' });
    expect(() => refs.fromHost(secret('shared-ca', 'vc-ns'))).toThrow(ReferenceUnresolvedError);
    expect(() => refs.fromHost(secret('shared-ca', 'vc-ns'))).toThrow(/importNamespace/);
  });
});

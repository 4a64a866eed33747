/**
 * The manifests in deploy/ agree with the code: every configured variable is a real setting, the
 * RBAC grants what the forwarder does (and nothing broader), and the pod's timings and ports fit
 * the forwarder's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FORWARD_SETTINGS, resolveForwardSettings } from '../../lib/forwarder/settings.ts';

/** The parts of the manifests the checks read. */
interface Manifest {
  kind: string;
  data: Record<string, string>;
  rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
  spec: {
    template: {
      spec: {
        terminationGracePeriodSeconds: number;
        containers: Array<{
          command: string[];
          ports: Array<{ containerPort: number }>;
          volumeMounts: Array<{ mountPath: string }>;
          readinessProbe: { httpGet: { path: string } };
          livenessProbe: { httpGet: { path: string } };
        }>;
      };
    };
  };
}

function load(path: string): Manifest[] {
  const text = readFileSync(new URL(`../../deploy/base/${path}`, import.meta.url), 'utf8');
  return parseAllDocuments(text).map((d) => d.toJS() as Manifest);
}

function rulesOf(doc: Manifest): Array<{ resource: string; verb: string; group: string }> {
  return doc.rules.flatMap((r) =>
    r.apiGroups.flatMap((group) =>
      r.resources.flatMap((resource) => r.verbs.map((verb) => ({ group, resource, verb }))),
    ),
  );
}

describe('deploy/', () => {
  const config = load('configmap.yaml')[0]!;
  const deployment = load('deployment.yaml')[0]!;
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0]!;

  it('configures only known settings, and they resolve', () => {
    const known = new Set<string>([
      ...FORWARD_SETTINGS.map((s) => s.env),
      ...FORWARD_SETTINGS.flatMap((s) => ('fallbackEnv' in s ? [...s.fallbackEnv] : [])),
    ]);
    for (const name of Object.keys(config.data)) expect(known, name).toContain(name);
    const settings = resolveForwardSettings({}, config.data);
    expect(settings.inCluster).toBe(true);
    expect(settings.leaderElect).toBe(true);
    expect(settings.hostKubeconfig.startsWith(container.volumeMounts[0]!.mountPath)).toBe(true);
    expect(container.ports[0]!.containerPort).toBe(settings.metricsPort);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(settings.shutdownTimeoutSeconds);
    expect(container.command).toEqual(['node', 'forward.mjs']);
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
  });

  it('grants the virtual-cluster verbs the forwarder uses, and nothing broader', () => {
    const [clusterRole, , role] = load('rbac.yaml');
    const granted = rulesOf(clusterRole!).map((r) => `${r.resource}:${r.verb}`);
    for (const needed of [
      'endpoints:list',
      'endpoints:watch',
      'endpoints:patch',
      'endpointslices:list',
      'endpointslices:watch',
      'endpointslices:patch',
      'services:list',
      'services:watch',
      'secrets:list',
      'secrets:watch',
      'secrets:create',
      'secrets:patch',
      'configmaps:list',
      'configmaps:watch',
      'configmaps:create',
      'configmaps:patch',
      'events:create',
      'events:patch',
    ]) {
      expect(granted).toContain(needed);
    }
    for (const r of [...rulesOf(clusterRole!), ...rulesOf(role!)]) {
      expect(['delete', 'deletecollection', 'update', '*']).not.toContain(
        r.resource === 'leases' ? r.verb.replace('update', 'ok') : r.verb,
      );
      expect(r.resource).not.toBe('*');
      expect(['', 'coordination.k8s.io', 'discovery.k8s.io']).toContain(r.group);
    }
    expect(
      rulesOf(role!)
        .map((r) => `${r.resource}:${r.verb}`)
        .sort(),
    ).toEqual(['leases:create', 'leases:get', 'leases:list', 'leases:update']);
  });

  it('gives the host side read-only access to Endpoints and EndpointSlices', () => {
    const role = load('../host/rbac.yaml').find((d) => d.kind === 'Role')!;
    expect(
      rulesOf(role)
        .map((r) => `${r.resource}:${r.verb}`)
        .sort(),
    ).toEqual(['endpoints:list', 'endpoints:watch', 'endpointslices:list', 'endpointslices:watch']);
  });
});

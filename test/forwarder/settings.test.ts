import { describe, expect, it } from 'vitest';
import {
  FORWARD_SETTINGS,
  ForwardSettingsError,
  resolveForwardSettings,
} from '../../lib/forwarder/settings.ts';

const required = {
  'in-cluster': true,
  'host-kubeconfig': '/etc/host/kubeconfig',
  function: 'endpoint-sync-prod-sync',
  name: 'vc1',
  namespace: 'vc-host',
};

describe('resolveForwardSettings', () => {
  it('applies defaults', () => {
    const s = resolveForwardSettings(required, {});
    expect(s).toMatchObject({
      inCluster: true,
      batchSize: 50,
      batchWindowMs: 50,
      maxInFlight: 4,
      resyncSeconds: 300,
      retryBudget: 10,
      leaderElect: false,
      markerDomain: 'virtualcluster.loft.sh',
      metricsAddress: '0.0.0.0',
      shutdownTimeoutSeconds: 25,
      logLevel: 'INFO',
    });
    expect(s.metricsPort).toBeUndefined();
  });

  it('reads every setting from its environment variable, flags winning', () => {
    const env = {
      ENDPOINT_SYNC_IN_CLUSTER: 'true',
      ENDPOINT_SYNC_HOST_KUBECONFIG: '/k',
      ENDPOINT_SYNC_FUNCTION: 'fn',
      ENDPOINT_SYNC_NAME: 'vc-env',
      ENDPOINT_SYNC_HOST_NAMESPACE: 'ns-env',
      ENDPOINT_SYNC_BATCH_SIZE: '100',
      ENDPOINT_SYNC_LEADER_ELECT: 'yes',
      ENDPOINT_SYNC_METRICS_PORT: '8080',
      ENDPOINT_SYNC_SIGNING_KEY_FILE: '/var/run/secrets/endpoint-sync/key.json',
      AWS_REGION: 'eu-west-1',
      POD_NAMESPACE: 'forwarder-ns',
    };
    const s = resolveForwardSettings({ name: 'vc-flag' }, env);
    expect(s).toMatchObject({
      inCluster: true,
      hostKubeconfig: '/k',
      functionName: 'fn',
      name: 'vc-flag',
      hostNamespace: 'ns-env',
      batchSize: 100,
      leaderElect: true,
      metricsPort: 8080,
      signingKeyFile: '/var/run/secrets/endpoint-sync/key.json',
      region: 'eu-west-1',
      leaseNamespace: 'forwarder-ns',
    });
  });

  it('names the flag and the variable in every error', () => {
    const cases: Array<[Record<string, unknown>, Record<string, string>, RegExp]> = [
      [
        { ...required, function: undefined },
        {},
        /missing --function \(or ENDPOINT_SYNC_FUNCTION\)/,
      ],
      [
        { ...required, 'batch-size': '501' },
        {},
        /--batch-size must be a whole number from 1 to 500/,
      ],
      [
        required,
        { ENDPOINT_SYNC_MAX_IN_FLIGHT: 'many' },
        /ENDPOINT_SYNC_MAX_IN_FLIGHT must be a whole number/,
      ],
      [
        required,
        { ENDPOINT_SYNC_LEADER_ELECT: 'maybe' },
        /ENDPOINT_SYNC_LEADER_ELECT must be true or false/,
      ],
      [
        { ...required, 'virtual-kubeconfig': '/v' },
        {},
        /either --virtual-kubeconfig or --in-cluster, not both/,
      ],
      [{ ...required, 'in-cluster': undefined }, {}, /missing --virtual-kubeconfig/],
      [{ ...required, 'log-level': 'loud' }, {}, /--log-level must be DEBUG/],
    ];
    for (const [values, env, message] of cases) {
      expect(() => resolveForwardSettings(values, env)).toThrow(ForwardSettingsError);
      expect(() => resolveForwardSettings(values, env)).toThrow(message);
    }
  });

  it('takes the item rate limit from --queue-qps or ENDPOINT_SYNC_QUEUE_QPS (default 500/s)', () => {
    expect(resolveForwardSettings(required, {}).queueQps).toBe(500);
    expect(resolveForwardSettings(required, { ENDPOINT_SYNC_QUEUE_QPS: '5000' }).queueQps).toBe(
      5000,
    );
    expect(resolveForwardSettings({ ...required, 'queue-qps': '20' }, {}).queueQps).toBe(20);
    expect(() => resolveForwardSettings({ ...required, 'queue-qps': '0' }, {})).toThrow(
      /--queue-qps must be a whole number from 1 to 100000/,
    );
  });

  it('takes more host namespaces to watch from --host-namespaces or ENDPOINT_SYNC_HOST_NAMESPACES, refusing names that are no namespace', () => {
    expect(resolveForwardSettings(required, {}).hostNamespaces).toEqual([]);
    expect(resolveForwardSettings(required, {}).configProbeSeconds).toBe(10);
    expect(
      resolveForwardSettings(
        { ...required, 'host-namespaces': 'vc1-x-a, vc1-x-b,,vc1-x-a' },
        { ENDPOINT_SYNC_HOST_NAMESPACES: 'ignored' },
      ).hostNamespaces,
    ).toEqual(['vc1-x-a', 'vc1-x-b']);
    expect(
      resolveForwardSettings(required, { ENDPOINT_SYNC_HOST_NAMESPACES: 'vc1-x-c' }).hostNamespaces,
    ).toEqual(['vc1-x-c']);
    expect(() =>
      resolveForwardSettings(required, { ENDPOINT_SYNC_HOST_NAMESPACES: 'vc1-x-a,Team_B' }),
    ).toThrow(/ENDPOINT_SYNC_HOST_NAMESPACES names "Team_B", not a namespace name/);
    expect(() =>
      resolveForwardSettings({ ...required, 'host-namespaces': 'a'.repeat(64) }, {}),
    ).toThrow(/--host-namespaces names "a{64}"/);
  });

  it('takes the kinds to watch from --kinds or ENDPOINT_SYNC_KINDS (default: every kind), refusing unknown ones', () => {
    expect(resolveForwardSettings(required, {}).kinds).toEqual(['endpoints', 'endpointslices']);
    expect(resolveForwardSettings(required, { ENDPOINT_SYNC_KINDS: 'Endpoints' }).kinds).toEqual([
      'endpoints',
    ]);
    expect(
      resolveForwardSettings({ ...required, kinds: 'endpointslices, endpoints,endpoints' }, {})
        .kinds,
    ).toEqual(['endpoints', 'endpointslices']);
    expect(() => resolveForwardSettings({ ...required, kinds: 'endpoints,pods' }, {})).toThrow(
      /--kinds names "pods", not a kind the forwarder watches \(allowed: endpoints, endpointslices, comma-separated\)/,
    );
    expect(() => resolveForwardSettings(required, { ENDPOINT_SYNC_KINDS: 'endpoints,' })).toThrow(
      /ENDPOINT_SYNC_KINDS names an empty entry/,
    );
  });

  it('turns sharding on by flag or ENDPOINT_SYNC_SHARDS (off by default), never together with leader election', () => {
    expect(resolveForwardSettings(required, {}).shards).toBe(false);
    expect(resolveForwardSettings({ ...required, shards: true }, {}).shards).toBe(true);
    expect(resolveForwardSettings(required, { ENDPOINT_SYNC_SHARDS: 'on' }).shards).toBe(true);
    expect(() =>
      resolveForwardSettings({ ...required, shards: true }, { ENDPOINT_SYNC_LEADER_ELECT: 'true' }),
    ).toThrow(/either --leader-elect .* or --shards/);
    expect(() => resolveForwardSettings(required, { ENDPOINT_SYNC_SHARDS: 'maybe' })).toThrow(
      /ENDPOINT_SYNC_SHARDS must be true or false/,
    );
  });

  it('gives every setting a distinct ENDPOINT_SYNC_ variable', () => {
    const envs = FORWARD_SETTINGS.map((s) => s.env);
    expect(new Set(envs).size).toBe(envs.length);
    for (const env of envs) expect(env).toMatch(/^ENDPOINT_SYNC_[A-Z_]+$/);
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULTS, mergeDefaults } from '../../lib/config/defaults.ts';
import { OWNED_KINDS, resourceForKind } from '../../lib/config/resource-kind.ts';

describe('DEFAULTS', () => {
  it('are those of docs/configuration.md', () => {
    expect(DEFAULTS.sync.toHost.endpoints.enabled).toBe(true);
    expect(DEFAULTS.sync.toHost.services.enabled).toBe(true);
    expect(DEFAULTS.sync.toHost.namespaces.enabled).toBe(false);
    expect(DEFAULTS.networking.advanced.clusterDomain).toBe('cluster.local');
  });
  it('are frozen all the way down', () => {
    expect(() => {
      (DEFAULTS.sync.toHost.endpoints as { enabled: boolean }).enabled = false;
    }).toThrow(TypeError);
  });
  it('fill in only what is missing or null, without touching the input', () => {
    const input = {
      sync: { toHost: { endpoints: { enabled: false }, services: null } },
      networking: 'x',
    };
    const merged = mergeDefaults(input) as {
      sync: { toHost: Record<string, unknown> };
      networking: unknown;
    };
    expect(merged.sync.toHost['endpoints']).toEqual({ enabled: false });
    expect(merged.sync.toHost['services']).toEqual({ enabled: true });
    expect(merged.networking).toBe('x');
    expect(input.sync.toHost.services).toBeNull();
  });
});

describe('resourceForKind', () => {
  it('maps the owned kinds and nothing else', () => {
    expect(resourceForKind('Endpoints')).toBe('endpoints');
    expect(resourceForKind('Service')).toBe('services');
    expect(resourceForKind('Secret')).toBe('secrets');
    expect(resourceForKind('ConfigMap')).toBe('configMaps');
    expect(resourceForKind('EndpointSlice')).toBe('endpointSlices');
    expect(resourceForKind('secret')).toBeUndefined();
    expect(resourceForKind('Pod')).toBeUndefined();
    expect(resourceForKind('toString')).toBeUndefined();
    expect(OWNED_KINDS).toEqual(['Endpoints', 'Service', 'Secret', 'ConfigMap', 'EndpointSlice']);
  });
});

/**
 * The request sequences of the differential suite: what endpoint-sync, kubectl and the client
 * libraries send to an API server, written down as data. Each sequence runs in a fresh namespace
 * of its own (`{ns}` in paths and bodies) on the emulator and on a real API server, and every
 * answer is compared after normalisation (differential.ts).
 *
 * A step refers to an earlier answer with `{rv:N}` / `{uid:N}` (the resourceVersion / uid of
 * step N's object, 0-based) and to the last list's continue token with `{continue}`.
 */

/** One request. */
export interface RequestStep {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  /** Default `application/json`. */
  contentType?: string;
}

/** A watch: the first `events` events (or what comes within 3 s), then the stream is closed. */
export interface WatchStep {
  watch: string;
  events: number;
}

export type Step = RequestStep | WatchStep;

/** A named sequence. */
export interface Sequence {
  name: string;
  steps: Step[];
}

const EP = '/api/v1/namespaces/{ns}/endpoints';
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices';
const JSON_PATCH = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

function endpoints(name: string, ip = '10.40.0.1', extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, ...extra },
    subsets: [{ addresses: [{ ip }], ports: [{ name: 'tcp', port: 80 }] }],
  };
}

function slice(name: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, labels: { 'kubernetes.io/service-name': 'svc' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.40.1.1'] }],
    ports: [{ name: 'tcp', port: 80 }],
    ...extra,
  };
}

export const SEQUENCES: Sequence[] = [
  {
    name: 'endpoints CRUD and optimistic concurrency',
    steps: [
      { method: 'POST', path: EP, body: endpoints('a') },
      { method: 'GET', path: `${EP}/a` },
      { method: 'POST', path: EP, body: endpoints('a') },
      {
        method: 'PUT',
        path: `${EP}/a`,
        body: {
          ...endpoints('a', '10.40.0.2'),
          metadata: { name: 'a', resourceVersion: '{rv:0}' },
        },
      },
      {
        method: 'PUT',
        path: `${EP}/a`,
        body: {
          ...endpoints('a', '10.40.0.3'),
          metadata: { name: 'a', resourceVersion: '{rv:0}' },
        },
      },
      {
        method: 'DELETE',
        path: `${EP}/a`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } },
      },
      {
        method: 'DELETE',
        path: `${EP}/a`,
        body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: '{uid:0}' } },
      },
      { method: 'GET', path: `${EP}/a` },
      { method: 'DELETE', path: `${EP}/a` },
      { method: 'PUT', path: `${EP}/b`, body: endpoints('b') },
    ],
  },
  {
    name: 'no-op writes and empty maps',
    steps: [
      {
        method: 'POST',
        path: EP,
        body: endpoints('n', '10.40.0.1', { labels: {}, annotations: {} }),
      },
      {
        method: 'PUT',
        path: `${EP}/n`,
        body: { ...endpoints('n'), metadata: { name: 'n', resourceVersion: '{rv:0}' } },
      },
      {
        method: 'PATCH',
        path: `${EP}/n`,
        body: { metadata: { labels: { a: 'b' } } },
        contentType: MERGE,
      },
      {
        method: 'PATCH',
        path: `${EP}/n`,
        body: { metadata: { labels: { a: 'b' } } },
        contentType: MERGE,
      },
      {
        method: 'PATCH',
        path: `${EP}/n`,
        body: { metadata: { labels: { a: null } } },
        contentType: MERGE,
      },
    ],
  },
  {
    name: 'Endpoints validation and defaulting',
    steps: [
      {
        method: 'POST',
        path: EP,
        body: {
          ...endpoints('v'),
          subsets: [{ addresses: [{ ip: 'not-an-ip' }], ports: [{ port: 80 }] }],
        },
      },
      {
        method: 'POST',
        path: EP,
        body: {
          ...endpoints('v'),
          subsets: [{ addresses: [{ ip: '10.40.0.1' }], ports: [{ port: 0 }] }],
        },
      },
      { method: 'POST', path: EP, body: { ...endpoints('Bad_Name') } },
      {
        method: 'POST',
        path: EP,
        body: {
          ...endpoints('w'),
          subsets: [{ addresses: [{ ip: '10.40.0.1', wat: true }], ports: [{ port: 80 }] }],
        },
      },
      {
        method: 'POST',
        path: EP,
        body: {
          ...endpoints('d'),
          subsets: [
            {
              addresses: [{ ip: '10.40.0.9' }, { ip: '10.40.0.1' }],
              ports: [{ port: 81 }, { port: 80, name: 'x' }],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'EndpointSlice defaulting, validation, immutability',
    steps: [
      { method: 'POST', path: SLICES, body: slice('s') },
      { method: 'POST', path: SLICES, body: slice('bad', { addressType: 'IPv5' }) },
      { method: 'POST', path: SLICES, body: slice('bad2', { endpoints: [{ addresses: [] }] }) },
      {
        method: 'PUT',
        path: `${SLICES}/s`,
        body: {
          ...slice('s', { addressType: 'IPv6' }),
          metadata: { name: 's', resourceVersion: '{rv:0}' },
        },
      },
      {
        method: 'PUT',
        path: `${SLICES}/s`,
        body: {
          ...slice('s', { endpoints: [{ addresses: ['10.40.1.2'] }] }),
          metadata: {
            name: 's',
            resourceVersion: '{rv:0}',
            labels: { 'kubernetes.io/service-name': 'svc' },
          },
        },
      },
    ],
  },
  {
    name: 'the four patch types',
    steps: [
      { method: 'POST', path: EP, body: endpoints('p', '10.40.0.1', { labels: { a: '1' } }) },
      {
        method: 'PATCH',
        path: `${EP}/p`,
        body: [{ op: 'add', path: '/metadata/labels/b', value: '2' }],
        contentType: JSON_PATCH,
      },
      {
        method: 'PATCH',
        path: `${EP}/p`,
        body: [{ op: 'test', path: '/metadata/labels/a', value: 'wrong' }],
        contentType: JSON_PATCH,
      },
      {
        method: 'PATCH',
        path: `${EP}/p`,
        body: { subsets: [{ addresses: [{ ip: '10.40.0.5' }], ports: [{ port: 80 }] }] },
        contentType: MERGE,
      },
      {
        method: 'PATCH',
        path: `${EP}/p`,
        body: { metadata: { annotations: { x: 'y' } } },
        contentType: STRATEGIC,
      },
      {
        method: 'PATCH',
        path: `${EP}/missing`,
        body: { metadata: { labels: { a: 'b' } } },
        contentType: MERGE,
      },
      { method: 'PATCH', path: `${EP}/p`, body: '{not json', contentType: MERGE },
    ],
  },
  {
    name: 'server-side apply: create, owners, conflicts, force',
    steps: [
      {
        method: 'PATCH',
        path: `${EP}/ssa?fieldManager=alice`,
        body: endpoints('ssa', '10.40.2.1', { labels: { owner: 'alice' } }),
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${EP}/ssa?fieldManager=bob`,
        body: endpoints('ssa', '10.40.2.1', { labels: { owner: 'bob' } }),
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${EP}/ssa?fieldManager=bob&force=true`,
        body: endpoints('ssa', '10.40.2.1', { labels: { owner: 'bob' } }),
        contentType: APPLY,
      },
      {
        method: 'PATCH',
        path: `${EP}/ssa?fieldManager=alice`,
        body: { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ssa' } },
        contentType: APPLY,
      },
      { method: 'PATCH', path: `${EP}/ssa`, body: endpoints('ssa'), contentType: APPLY },
    ],
  },
  {
    name: 'dryRun',
    steps: [
      { method: 'POST', path: `${EP}?dryRun=All`, body: endpoints('dry') },
      { method: 'GET', path: `${EP}/dry` },
      { method: 'POST', path: EP, body: endpoints('dry') },
      { method: 'DELETE', path: `${EP}/dry?dryRun=All` },
      { method: 'GET', path: `${EP}/dry` },
      { method: 'POST', path: `${EP}?dryRun=Bogus`, body: endpoints('dry2') },
    ],
  },
  {
    name: 'list: pagination, selectors',
    steps: [
      { method: 'POST', path: EP, body: endpoints('l1', '10.40.3.1', { labels: { tier: 'a' } }) },
      { method: 'POST', path: EP, body: endpoints('l2', '10.40.3.2', { labels: { tier: 'b' } }) },
      { method: 'POST', path: EP, body: endpoints('l3', '10.40.3.3', { labels: { tier: 'a' } }) },
      { method: 'GET', path: `${EP}?limit=2` },
      { method: 'GET', path: `${EP}?limit=2&continue={continue}` },
      { method: 'GET', path: `${EP}?labelSelector=tier%3Da` },
      { method: 'GET', path: `${EP}?labelSelector=tier%20in%20(b)` },
      { method: 'GET', path: `${EP}?fieldSelector=metadata.name%3Dl2` },
      { method: 'GET', path: `${EP}?labelSelector=%3D%3D` },
      { method: 'GET', path: `${EP}?fieldSelector=spec.nope%3Dx` },
      { method: 'GET', path: `${EP}?limit=1&continue=not-a-token` },
    ],
  },
  {
    name: 'watch: from a resourceVersion, bookmarks, initial events',
    steps: [
      { method: 'POST', path: EP, body: endpoints('w1') },
      { method: 'POST', path: EP, body: endpoints('w2') },
      { watch: `${EP}?watch=1&resourceVersion={rv:0}`, events: 1 },
      {
        watch: `${EP}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
        events: 3,
      },
      { watch: `${EP}?watch=1&fieldSelector=metadata.name%3Dw1&resourceVersion={rv:0}`, events: 1 },
      { method: 'DELETE', path: `${EP}/w1` },
      { watch: `${EP}?watch=1&resourceVersion={rv:1}`, events: 1 },
    ],
  },
];

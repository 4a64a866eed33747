/**
 * What the host must hold for a given virtual state, computed with the product's own planner
 * (`planSync`) rather than a second copy of the rules, and a comparison with what the host does
 * hold. Used by the chaos test: after the faults stop, the host must equal the expectation exactly.
 */
import { readFile } from 'node:fs/promises';
import { parseConfig } from '../../lib/config/index.ts';
import type { SyncConfig } from '../../lib/config/types.ts';
import { type KubeClient, RESOURCES } from '../../lib/kube/index.ts';
import type { Stack } from '../../lib/local/stack.ts';
import type { KubeObject } from '../../lib/model/index.ts';
import {
  createExpressionEngine,
  type ExpressionEngine,
} from '../../lib/patches/expression/index.ts';
import {
  hostKeyOf,
  ITEM_KINDS,
  kindResource,
  planSync,
  type SyncKind,
} from '../../lib/sync/index.ts';

/** The loaded configuration of `path`; throws on any error diagnostic. */
export async function loadConfig(path: string | URL): Promise<SyncConfig> {
  return parsedConfig(await readFile(path, 'utf8'), String(path));
}

/** The configuration in `text` (named `source` in errors); throws on any error diagnostic. */
function parsedConfig(text: string, source: string): SyncConfig {
  const result = parseConfig(text, source);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (!result.config || errors.length > 0) {
    throw new Error(
      `configuration ${source} is invalid: ${errors.map((d) => d.message).join('; ')}`,
    );
  }
  return result.config;
}

/** Outcome of {@link compareHost}. */
export interface HostComparison {
  /** Host copies the virtual state calls for. */
  expected: number;
  /** {@link expected} by resource plural. */
  expectedByResource: Record<string, number>;
  /** Managed host copies found. */
  actual: number;
  /** Virtual keys whose host copy is missing. */
  lost: string[];
  /** Managed host copies no virtual object calls for. */
  orphaned: string[];
  /** One line per host copy that differs from the expectation, or plan that still writes. */
  mismatches: string[];
}

/** The clients {@link HostExpectation.compare} reads the two clusters with. */
export interface StackClients {
  virtual: KubeClient;
  host: KubeClient;
}

/** Whether nothing is lost, orphaned or different. */
export function converged(c: HostComparison): boolean {
  return c.lost.length + c.orphaned.length + c.mismatches.length === 0;
}

const SERVER_FIELDS = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
];

/** The object without the fields the API server sets, for an exact comparison. */
function withoutServerFields(object: KubeObject): KubeObject {
  const metadata: Record<string, unknown> = { ...object.metadata };
  for (const field of SERVER_FIELDS) delete metadata[field];
  return { ...object, metadata: metadata as KubeObject['metadata'] };
}

/**
 * The copy without its `event-time` marker: the time of the signed event it was last written
 * from, which only the write knows (the planner leaves it to the function's host writes).
 */
function withoutWriteTime(object: KubeObject, markerDomain: string): KubeObject {
  const key = `${markerDomain}/event-time`;
  const annotations = object.metadata.annotations;
  if (!annotations || !(key in annotations)) return object;
  const { [key]: _written, ...rest } = annotations;
  return { ...object, metadata: { ...object.metadata, annotations: rest } };
}

/** JSON with sorted keys, so key order does not count as a difference. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : v,
  );
}

/** Compares a stack's host with what its virtual cluster calls for. */
export class HostExpectation {
  readonly #config: SyncConfig;
  readonly #engine: ExpressionEngine;

  private constructor(config: SyncConfig, engine: ExpressionEngine) {
    this.#config = config;
    this.#engine = engine;
  }

  /** Loads `configPath` and an expression engine. */
  static async create(configPath: string | URL): Promise<HostExpectation> {
    return new HostExpectation(await loadConfig(configPath), await createExpressionEngine());
  }

  /** The expectation of the configuration `text` (one put into S3 by a test). */
  static async fromText(text: string): Promise<HostExpectation> {
    return new HostExpectation(parsedConfig(text, 'config.yaml'), await createExpressionEngine());
  }

  dispose(): void {
    this.#engine.dispose();
  }

  /**
   * Reads both clusters over HTTP (with `clients`: by default the stack's own; on a real cluster
   * behind a fault proxy, clients of its own that bypass the proxy) and compares, for every item
   * kind (Endpoints, EndpointSlices): every virtual object the planner would sync has a host copy
   * equal to the planner's fresh copy (server fields aside), the planner wants no write for any
   * key given the current host, and no other managed copy exists in any host namespace (both
   * namespace modes: copies of the other mode's layout count as orphans).
   */
  async compare(
    stack: Stack,
    clients: StackClients = { virtual: stack.virtual.client, host: stack.host.client },
  ): Promise<HostComparison> {
    const services = await clients.virtual.listAll<KubeObject>(RESOURCES.services);
    const serviceByKey = new Map(
      services.items.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]),
    );
    const out: HostComparison = {
      expected: 0,
      expectedByResource: {},
      actual: 0,
      lost: [],
      orphaned: [],
      mismatches: [],
    };
    for (const kind of ITEM_KINDS) {
      await this.#compareKind(stack, clients, kind, serviceByKey, out);
    }
    return out;
  }

  async #compareKind(
    stack: Stack,
    clients: StackClients,
    kind: SyncKind,
    serviceByKey: Map<string, KubeObject>,
    out: HostComparison,
  ): Promise<void> {
    const { identity } = stack;
    const resource = kindResource(kind);
    const [virtualObjects, hostObjects] = await Promise.all([
      clients.virtual.listAll<KubeObject>(resource),
      clients.host.listAll<KubeObject>(resource, {
        labelSelector: `${identity.markerDomain}/managed-by=${identity.name}`,
      }),
    ]);
    const hostByName = new Map(
      hostObjects.items.map((h) => [`${h.metadata.namespace}/${h.metadata.name}`, h]),
    );
    out.actual += hostByName.size;
    const wanted = new Set<string>();
    for (const virtual of virtualObjects.items) {
      const key = { namespace: virtual.metadata.namespace!, name: virtual.metadata.name! };
      const id = `${resource.plural}/${key.namespace}/${key.name}`;
      const hostKey = hostKeyOf(resource.kind, key, identity, this.#config);
      const hostName = `${hostKey.namespace}/${hostKey.name}`;
      const stored = hostByName.get(hostName);
      const host = stored ? withoutWriteTime(stored, identity.markerDomain) : null;
      const companions: Record<string, KubeObject | null> = {};
      for (const companion of kind.companions) {
        const named = companion.keyOf(key, virtual);
        if (named) {
          companions[companion.resource] =
            serviceByKey.get(`${named.namespace}/${named.name}`) ?? null;
        }
      }
      const input = {
        identity,
        config: this.#config,
        resource: resource.plural,
        key,
        virtualObject: virtual,
        companions,
      };
      const fresh = planSync({ ...input, hostObject: null }, { evaluator: this.#engine });
      if (fresh.status === 'failed') {
        out.mismatches.push(`${id}: the planner fails on it: ${fresh.reason}`);
        continue;
      }
      const create = fresh.hostWrites.find(
        (w) => w.verb === 'create' && w.resource === resource.plural,
      );
      if (create && create.verb === 'create') {
        out.expected++;
        out.expectedByResource[resource.plural] =
          (out.expectedByResource[resource.plural] ?? 0) + 1;
        wanted.add(hostName);
        if (!host) {
          out.lost.push(id);
          continue;
        }
        const want = canonical(withoutServerFields(create.object));
        const have = canonical(withoutServerFields(host));
        if (want !== have)
          out.mismatches.push(`${id}: host copy differs\n  want ${want}\n  have ${have}`);
        if (
          host.metadata.annotations?.[`${identity.markerDomain}/object-uid`] !==
          virtual.metadata.uid
        ) {
          out.mismatches.push(`${id}: host copy was made from another object (uid)`);
        }
      }
      const now = planSync({ ...input, hostObject: host }, { evaluator: this.#engine });
      if (now.hostWrites.length + now.virtualWrites.length > 0) {
        out.mismatches.push(
          `${id}: the planner still wants writes (${now.reasonCode}: ${now.reason})`,
        );
      }
    }
    for (const name of hostByName.keys()) {
      if (!wanted.has(name)) out.orphaned.push(`${resource.plural}/${name}`);
    }
  }
}

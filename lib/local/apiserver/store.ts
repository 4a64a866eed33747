/**
 * The emulated cluster's storage: objects per resource, one monotonic resourceVersion counter
 * (like etcd's revision), an event history kept for watch resume (the compaction window), and the
 * write semantics of kube-apiserver (decode, namespace checks, defaulting, validation, optimistic
 * concurrency, preconditions, finalizers, dry run). The HTTP layer and in-process callers use the
 * same methods, so both see identical results and resourceVersions.
 */
import type { KubeObject } from '../../kube/object.ts';
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  type FieldError,
  failure,
  fieldErr,
  invalid,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  StatusError,
  timeout,
} from './errors.ts';
import { depthMessage, jsonProblem, MAX_NESTING_DEPTH } from './json-limits.ts';
import { getOwn, setOwn } from './own.ts';
import { applyPatch, PatchError, type PatchType } from './patch.ts';
import { nameSuffix, randomUid } from './random.ts';
import { apiVersionOf, RESOURCES, type ResourceType, resourceType } from './resources.ts';
import { DecodeError, decode } from './schema.ts';
import type { FieldSelector, LabelSelector } from './selectors.ts';
import { applyDefaults, validateKind, validateObjectMeta, validateUpdate } from './validation.ts';

type Obj = Record<string, unknown>;
type Meta = Record<string, unknown>;

/** A watch event type. */
export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, kept in the history for watch resume. */
export interface StoredEvent {
  rv: number;
  type: EventType;
  resource: string;
  namespace: string;
  /** The object after the change (for DELETED: its last state, with the deletion's RV). */
  object: Obj;
  /** The object before the change (absent for ADDED). */
  prev: Obj | undefined;
}

/** How unknown fields in a body are treated (the `fieldValidation` query parameter). */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** Options of a write. */
export interface WriteOptions {
  /** `dryRun=All`: validate and answer, store nothing, no resourceVersion change. */
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  /** `status` to write only the status subresource. */
  subresource?: string;
  /** Warnings for the `Warning` response header are pushed here. */
  warnings?: string[];
}

/** Preconditions of a delete (`DeleteOptions.preconditions`). */
export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

/** Options of a delete. */
export interface DeleteOptions {
  dryRun?: boolean;
  preconditions?: Preconditions;
}

/** Options of a list. */
export interface ListOptions {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

/** A list result: stored objects (no kind/apiVersion), the list RV and pagination. */
export interface ListResult {
  items: Obj[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** What a watch subscriber receives. */
export interface WatchSink {
  /** A change that passed the subscriber's filters, already translated for selectors. */
  event(type: EventType, object: Obj, ev: StoredEvent | undefined): void;
  /**
   * Delivering to this subscriber threw: it has been unsubscribed (the write and every other
   * subscriber went on). The sink should end its stream.
   */
  failed?(err: unknown): void;
}

interface Subscription {
  resource: string;
  namespace: string | undefined;
  label: LabelSelector | undefined;
  field: FieldSelector | undefined;
  sink: WatchSink;
}

/** Options of the store. */
export interface StoreOptions {
  rand: () => number;
  compactionWindow: number;
  now?: () => Date;
}

const continueVersion = 'meta.k8s.io/v1';

function clone<T>(v: T): T {
  return structuredClone(v);
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function gr(r: ResourceType) {
  return { group: r.group, resource: r.name };
}

function gk(r: ResourceType) {
  return { group: r.group, kind: r.kind };
}

function metaOf(o: Obj): Meta {
  return (o.metadata as Meta | undefined) ?? {};
}

function nameOf(o: Obj): string {
  return String(metaOf(o).name ?? '');
}

function nsOf(o: Obj): string {
  return String(metaOf(o).namespace ?? '');
}

// Metadata in the field order the real server writes it.
const metaOrder = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

function orderMeta(meta: Meta): Meta {
  const out: Meta = {};
  for (const k of metaOrder) if (getOwn(meta, k) !== undefined) out[k] = meta[k];
  for (const [k, v] of Object.entries(meta))
    if (!Object.hasOwn(out, k) && v !== undefined) setOwn(out, k, v);
  return out;
}

function stripTypeMeta(o: Obj): Obj {
  const { apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function sameContent(a: Obj, b: Obj): boolean {
  const strip = (o: Obj) => {
    const { metadata, ...rest } = o;
    const { resourceVersion: _rv, managedFields: _mf, ...m } = (metadata as Meta) ?? {};
    return JSON.stringify({ m: orderMeta(m), rest });
  };
  return strip(a) === strip(b);
}

const MAX_UINT64 = 2n ** 64n - 1n;

/**
 * Parses a resourceVersion parameter as Go's `strconv.ParseUint(v, 10, 64)` does (400 on bad
 * syntax or past uint64). Values past the current version are returned as `Infinity` rather
 * than rounded (`Number("99999999999999999999")` would be a different, smaller number).
 */
export function parseRv(value: string): number {
  if (!/^\d+$/.test(value)) {
    throw badRequest(
      `invalid resource version: strconv.ParseUint: parsing "${value}": invalid syntax`,
    );
  }
  const big = BigInt(value);
  if (big > MAX_UINT64) {
    throw badRequest(
      `invalid resource version: strconv.ParseUint: parsing "${value}": value out of range`,
    );
  }
  return big > BigInt(Number.MAX_SAFE_INTEGER) ? Number.POSITIVE_INFINITY : Number(big);
}

/**
 * The object store of one emulated cluster. Stored objects are never mutated after they are
 * stored; readers get copies (in-process) or serialized JSON (HTTP).
 */
export class ClusterStore {
  readonly #tables = new Map<string, Map<string, Obj>>();
  readonly #rand: () => number;
  readonly #now: () => Date;
  #rv = 0;
  #log: StoredEvent[] = [];
  #head = 0;
  #compactedRv = 0;
  #window: number;
  readonly #subs = new Set<Subscription>();
  readonly #clusterIPs = new Set<string>();
  #nextIP = 1;
  #nextNodePort = 30000;

  constructor(options: StoreOptions) {
    this.#rand = options.rand;
    this.#window = Math.max(1, options.compactionWindow);
    this.#now = options.now ?? (() => new Date());
    for (const r of RESOURCES) this.#tables.set(r.name, new Map());
  }

  /** The current resourceVersion of the cluster (the last committed change), as a string. */
  resourceVersion(): string {
    return String(this.#rv);
  }

  /** The highest resourceVersion no longer in the watch history (resuming at or after it works). */
  compactedResourceVersion(): number {
    return this.#compactedRv;
  }

  /** Drops the whole watch history, as an etcd compaction would; older resumes then get 410. */
  compact(): void {
    this.#log = [];
    this.#head = 0;
    this.#compactedRv = this.#rv;
  }

  #type(resource: string): ResourceType {
    const r = resourceType(resource);
    if (!r) {
      throw new StatusError(
        failure(404, 'NotFound', 'the server could not find the requested resource', {}),
      );
    }
    return r;
  }

  #table(r: ResourceType): Map<string, Obj> {
    return this.#tables.get(r.name)!;
  }

  #key(r: ResourceType, ns: string | undefined, name: string): string {
    return r.namespaced ? `${ns ?? ''}/${name}` : name;
  }

  /** The stored object, by reference (do not mutate), or undefined. */
  peek(resource: string, namespace: string | undefined, name: string): Obj | undefined {
    const r = this.#type(resource);
    return this.#table(r).get(this.#key(r, namespace, name));
  }

  /** A copy of an object with `kind`/`apiVersion`; throws a 404 {@link StatusError} when absent. */
  get(resource: string, namespace: string | undefined, name: string): KubeObject {
    const r = this.#type(resource);
    const o = this.#table(r).get(this.#key(r, namespace, name));
    if (!o) throw notFound(gr(r), name);
    return clone(this.withTypeMeta(r, o)) as KubeObject;
  }

  /** `{kind, apiVersion, ...object}` without copying the object. */
  withTypeMeta(r: ResourceType, o: Obj): Obj {
    return { kind: r.kind, apiVersion: apiVersionOf(r), ...o };
  }

  /** Copies of every object of a resource (optionally in one namespace), in key order. */
  list(resource: string, namespace?: string): KubeObject[] {
    const r = this.#type(resource);
    return this.listAt(r, namespace, {}).items.map(
      (o) => clone(this.withTypeMeta(r, o)) as KubeObject,
    );
  }

  #sortedItems(
    r: ResourceType,
    namespace: string | undefined,
    table: Map<string, Obj>,
  ): [string, Obj][] {
    const prefix = namespace !== undefined && r.namespaced ? `${namespace}/` : undefined;
    const entries: [string, Obj][] = [];
    for (const e of table) if (prefix === undefined || e[0].startsWith(prefix)) entries.push(e);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return entries;
  }

  /** The table of `r` as it was at `rv`, rebuilt from the history; 410 if compacted. */
  #snapshotAt(r: ResourceType, rv: number, what: 'list' | 'continue'): Map<string, Obj> {
    if (rv === this.#rv) return this.#table(r);
    if (rv < this.#compactedRv) {
      throw expired(
        what === 'continue'
          ? 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'
          : 'The resourceVersion for the provided list is too old.',
      );
    }
    const snap = new Map(this.#table(r));
    for (let i = this.#log.length - 1; i >= this.#head; i--) {
      const ev = this.#log[i]!;
      if (ev.rv <= rv) break;
      if (ev.resource !== r.name) continue;
      const key = this.#key(r, ev.namespace, nameOf(ev.object));
      if (ev.type === 'ADDED') snap.delete(key);
      else if (ev.prev) snap.set(key, ev.prev);
    }
    return snap;
  }

  /** A list with selectors, pagination and resourceVersion semantics (see docs/emulator.md). */
  listAt(r: ResourceType, namespace: string | undefined, opts: ListOptions): ListResult {
    let atRv = this.#rv;
    let start = '';
    let table = this.#table(r);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    let paginate = limit > 0;
    if (opts.continue) {
      const token = decodeContinue(opts.continue);
      atRv = token.rv;
      start = token.start;
      if (atRv > this.#rv)
        throw badRequest('continue key is not valid: resource version is in the future');
      table = this.#snapshotAt(r, atRv, 'continue');
    } else if (opts.resourceVersion !== undefined && opts.resourceVersion !== '') {
      const rv = parseRv(opts.resourceVersion);
      if (rv === 0) {
        // "Any" version: served from the watch cache, which ignores limit.
        paginate = false;
      } else if (rv > this.#rv) {
        throw timeout(`Too large resource version: ${rv}, current: ${this.#rv}`, 1);
      } else if (
        opts.resourceVersionMatch === 'Exact' ||
        (!opts.resourceVersionMatch && limit > 0)
      ) {
        atRv = rv;
        table = this.#snapshotAt(r, rv, 'list');
      }
    }
    const entries = this.#sortedItems(r, namespace, table);
    const items: Obj[] = [];
    const filtered =
      !!(opts.labelSelector && !opts.labelSelector.empty) ||
      !!(opts.fieldSelector && !opts.fieldSelector.empty);
    let i = 0;
    if (start) {
      while (i < entries.length && entries[i]![0] < start) i++;
    }
    let lastKey = '';
    for (; i < entries.length; i++) {
      const [key, o] = entries[i]!;
      if (!this.#matches(o, opts.labelSelector, opts.fieldSelector)) continue;
      if (paginate && items.length === limit) {
        const result: ListResult = {
          items,
          resourceVersion: String(atRv),
          continue: encodeContinue(atRv, `${lastKey}\u0000`),
        };
        if (!filtered) result.remainingItemCount = entries.length - i;
        return result;
      }
      items.push(o);
      lastKey = key;
    }
    return { items, resourceVersion: String(atRv) };
  }

  #matches(o: Obj, label: LabelSelector | undefined, field: FieldSelector | undefined): boolean {
    if (
      label &&
      !label.empty &&
      !label.matches(metaOf(o).labels as Record<string, string> | undefined)
    )
      return false;
    if (field && !field.empty && !field.matches(o)) return false;
    return true;
  }

  #commit(
    type: EventType,
    r: ResourceType,
    key: string,
    object: Obj,
    prev: Obj | undefined,
  ): StoredEvent {
    const table = this.#table(r);
    if (type === 'DELETED') table.delete(key);
    else table.set(key, object);
    const ev: StoredEvent = {
      rv: this.#rv,
      type,
      resource: r.name,
      namespace: nsOf(object),
      object,
      prev,
    };
    this.#log.push(ev);
    if (this.#log.length - this.#head > this.#window) {
      this.#compactedRv = this.#log[this.#head]!.rv;
      this.#log[this.#head] = undefined as unknown as StoredEvent;
      this.#head++;
      if (this.#head > 1024 && this.#head * 2 > this.#log.length) {
        this.#log = this.#log.slice(this.#head);
        this.#head = 0;
      }
    }
    this.#dispatch(ev);
    return ev;
  }

  #dispatch(ev: StoredEvent): void {
    for (const sub of this.#subs) {
      // The write is already committed: a subscriber that throws must cost its own watch only,
      // never the writer's answer or the other subscribers' events.
      try {
        this.#deliver(sub, ev);
      } catch (err) {
        this.#subs.delete(sub);
        try {
          sub.sink.failed?.(err);
        } catch {
          // Nothing more can be done for this subscriber; it is already unsubscribed.
        }
      }
    }
  }

  #deliver(sub: Subscription, ev: StoredEvent): void {
    if (sub.resource !== ev.resource) return;
    if (sub.namespace !== undefined && sub.namespace !== ev.namespace) return;
    if (!sub.label && !sub.field) {
      sub.sink.event(ev.type, ev.object, ev);
      return;
    }
    const now = ev.type !== 'DELETED' && this.#matches(ev.object, sub.label, sub.field);
    const before = ev.prev !== undefined && this.#matches(ev.prev, sub.label, sub.field);
    if (ev.type === 'DELETED') {
      if (before) sub.sink.event('DELETED', ev.object, undefined);
    } else if (now && before) {
      sub.sink.event('MODIFIED', ev.object, undefined);
    } else if (now) {
      sub.sink.event('ADDED', ev.object, undefined);
    } else if (before) {
      // Leaving the selector looks like a deletion to this watcher, as on a real server.
      sub.sink.event('DELETED', ev.object, undefined);
    }
  }

  /**
   * Subscribes to changes of `r`. `from`: 'now' (only future changes), 'initial' (synthetic ADDED
   * for the current state first) or a resourceVersion (replay history after it; 410 if compacted).
   * Returns the unsubscribe function.
   */
  watch(
    r: ResourceType,
    namespace: string | undefined,
    label: LabelSelector | undefined,
    field: FieldSelector | undefined,
    from: 'now' | 'initial' | number,
    sink: WatchSink,
  ): () => void {
    const sub: Subscription = {
      resource: r.name,
      namespace,
      label: label && !label.empty ? label : undefined,
      field: field && !field.empty ? field : undefined,
      sink,
    };
    if (from === 'initial') {
      for (const [, o] of this.#sortedItems(r, namespace, this.#table(r))) {
        if (this.#matches(o, sub.label, sub.field)) sink.event('ADDED', o, undefined);
      }
    } else if (typeof from === 'number') {
      if (from < this.#compactedRv) {
        throw expired(`too old resource version: ${from} (${this.#compactedRv})`);
      }
      let lo = this.#head;
      let hi = this.#log.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.#log[mid]!.rv <= from) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < this.#log.length; i++) this.#deliver(sub, this.#log[i]!);
    }
    this.#subs.add(sub);
    return () => {
      this.#subs.delete(sub);
    };
  }

  #checkTypeMeta(r: ResourceType, body: Obj): void {
    const expected = apiVersionOf(r);
    if (body.apiVersion !== undefined && body.apiVersion !== '' && body.apiVersion !== expected) {
      throw badRequest(
        `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`,
      );
    }
    if (body.kind !== undefined && body.kind !== '' && body.kind !== r.kind) {
      throw badRequest(
        `${String(body.kind)} in version "${r.version}" cannot be handled as a ${r.kind}: no kind "${String(body.kind)}" is registered for version "${expected}" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"`,
      );
    }
  }

  #decode(r: ResourceType, body: unknown, opts: WriteOptions): Obj {
    if (!isObj(body)) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${r.kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      );
    }
    // Also covers in-process callers and the results of patches, which no body check saw.
    const tooDeep = jsonProblem(body, { maxDepth: MAX_NESTING_DEPTH, jsonTypesOnly: false });
    if (tooDeep) {
      throw badRequest(
        `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${depthMessage(tooDeep)}`,
      );
    }
    this.#checkTypeMeta(r, body);
    let decoded: ReturnType<typeof decode>;
    try {
      decoded = decode(r.kind, body);
    } catch (err) {
      if (err instanceof DecodeError) {
        throw badRequest(
          `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${err.message}`,
        );
      }
      throw err;
    }
    if (decoded.unknownFields.length > 0) {
      const mode = opts.fieldValidation ?? 'Warn';
      if (mode === 'Strict') {
        throw badRequest(
          `strict decoding error: ${decoded.unknownFields.map((f) => `unknown field "${f}"`).join(', ')}`,
        );
      }
      if (mode === 'Warn')
        for (const f of decoded.unknownFields) opts.warnings?.push(`unknown field "${f}"`);
    }
    const obj = stripTypeMeta(decoded.value);
    obj.metadata = isObj(obj.metadata) ? { ...obj.metadata } : {};
    return obj;
  }

  #requireNamespace(r: ResourceType, ns: string | undefined): void {
    if (!r.namespaced) return;
    if (!ns || !this.#table(resourceType('namespaces')!).has(ns)) {
      throw notFound({ group: '', resource: 'namespaces' }, ns ?? '');
    }
  }

  #setNamespace(r: ResourceType, obj: Obj, ns: string | undefined): void {
    const meta = metaOf(obj);
    if (r.namespaced) {
      if (meta.namespace && meta.namespace !== ns) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = ns;
    } else if (meta.namespace) {
      delete meta.namespace;
    }
  }

  #allocateServiceIPs(spec: Obj, errs: FieldError[]): void {
    if (spec.type === 'ExternalName') {
      delete spec.clusterIP;
      delete spec.clusterIPs;
      return;
    }
    const requested = typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
    if (requested === 'None') {
      spec.clusterIPs = ['None'];
    } else if (requested) {
      if (this.#clusterIPs.has(requested)) {
        errs.push(
          fieldErr.invalid(
            'spec.clusterIPs',
            [requested],
            `failed to allocate IP ${requested}: provided IP is already allocated`,
          ),
        );
        return;
      }
      spec.clusterIPs = [requested];
    } else {
      let ip = '';
      do {
        const n = this.#nextIP++;
        ip = `10.96.${(n >> 8) & 255}.${n & 255}`;
      } while (this.#clusterIPs.has(ip));
      spec.clusterIP = ip;
      spec.clusterIPs = [ip];
    }
    if (!spec.ipFamilies) spec.ipFamilies = ['IPv4'];
    if (!spec.ipFamilyPolicy) spec.ipFamilyPolicy = 'SingleStack';
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer') {
      for (const p of (spec.ports as Obj[] | undefined) ?? []) {
        if (!p.nodePort) p.nodePort = this.#nextNodePort++;
      }
    }
  }

  #claimServiceIP(o: Obj, claim: boolean): void {
    const ip = (o.spec as Obj | undefined)?.clusterIP;
    if (typeof ip === 'string' && ip && ip !== 'None') {
      if (claim) this.#clusterIPs.add(ip);
      else this.#clusterIPs.delete(ip);
    }
  }

  #stamp(r: ResourceType, obj: Obj, dryRun: boolean): Obj {
    const meta = metaOf(obj);
    meta.uid = randomUid(this.#rand);
    meta.creationTimestamp = rfc3339(this.#now());
    if (r.generation) meta.generation = 1;
    else delete meta.generation;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    delete meta.resourceVersion;
    if (!dryRun) meta.resourceVersion = String(this.#rv + 1);
    obj.metadata = orderMeta(meta);
    if (r.kind === 'Namespace') {
      const labels = { ...((meta.labels as Record<string, string> | undefined) ?? {}) };
      labels['kubernetes.io/metadata.name'] = String(meta.name);
      (obj.metadata as Meta).labels = labels;
    }
    return obj;
  }

  /** Creates an object (POST). Returns the stored object (or the dry-run result). */
  create(
    resource: string,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions = {},
  ): KubeObject {
    const r = this.#type(resource);
    return clone(this.withTypeMeta(r, this.createObject(r, namespace, body, opts))) as KubeObject;
  }

  /** {@link create} on a resolved type, returning the stored object by reference. */
  createObject(
    r: ResourceType,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions,
  ): Obj {
    const obj = this.#decode(r, body, opts);
    this.#setNamespace(r, obj, namespace);
    return this.#createDecoded(r, namespace, obj, opts, true);
  }

  #createDecoded(
    r: ResourceType,
    namespace: string | undefined,
    obj: Obj,
    opts: WriteOptions,
    rejectRv: boolean,
  ): Obj {
    const meta = metaOf(obj);
    this.#requireNamespace(r, namespace);
    if (rejectRv && meta.resourceVersion) {
      throw new StatusError(
        failure(500, undefined, 'resourceVersion should not be set on objects to be created'),
      );
    }
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) {
      meta.name = `${meta.generateName.slice(0, 58)}${nameSuffix(this.#rand)}`;
    }
    applyDefaults(r, obj);
    const errs = [...validateKind(r, obj), ...validateObjectMeta(r, obj)];
    const name = String(meta.name ?? '');
    if (errs.length > 0) throw invalid(gk(r), name, errs);
    const key = this.#key(r, namespace, name);
    if (this.#table(r).has(key)) throw alreadyExists(gr(r), name);
    if (r.kind === 'Service') {
      const ipErrs: FieldError[] = [];
      this.#allocateServiceIPs(obj.spec as Obj, ipErrs);
      if (ipErrs.length > 0) throw invalid(gk(r), name, ipErrs);
    }
    this.#stamp(r, obj, !!opts.dryRun);
    if (opts.dryRun) return obj;
    this.#rv++;
    if (r.kind === 'Service') this.#claimServiceIP(obj, true);
    this.#commit('ADDED', r, key, obj, undefined);
    return obj;
  }

  /** Replaces an object (PUT). Returns the stored object. */
  update(
    resource: string,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions = {},
  ): KubeObject {
    const r = this.#type(resource);
    const name = isObj(body) && isObj(body.metadata) ? String(body.metadata.name ?? '') : '';
    return clone(
      this.withTypeMeta(r, this.updateObject(r, namespace, name, body, opts).object),
    ) as KubeObject;
  }

  /** {@link update} on a resolved type and URL name; `created` when PUT created the object. */
  updateObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions,
  ): { object: Obj; created: boolean } {
    const obj = this.#decode(r, body, opts);
    const meta = metaOf(obj);
    const bodyName = String(meta.name ?? '');
    if (bodyName !== name) {
      throw badRequest(
        `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
      );
    }
    this.#setNamespace(r, obj, namespace);
    const key = this.#key(r, namespace, name);
    const existing = this.#table(r).get(key);
    if (!existing) {
      if (opts.subresource || !r.allowCreateOnUpdate) throw notFound(gr(r), name);
      return { object: this.#createDecoded(r, namespace, obj, opts, false), created: true };
    }
    return { object: this.#updateExisting(r, key, existing, obj, opts), created: false };
  }

  #updateExisting(
    r: ResourceType,
    key: string,
    existing: Obj,
    incoming: Obj,
    opts: WriteOptions,
  ): Obj {
    const name = nameOf(existing);
    const meta = metaOf(incoming);
    const oldMeta = metaOf(existing);
    if (
      meta.resourceVersion !== undefined &&
      meta.resourceVersion !== '' &&
      meta.resourceVersion !== oldMeta.resourceVersion
    ) {
      throw conflict(gr(r), name, OPTIMISTIC_LOCK_MESSAGE);
    }
    let obj: Obj;
    if (opts.subresource === 'status') {
      // The status subresource changes status only; everything else is kept.
      obj = clone(existing);
      for (const f of r.statusFields) {
        if (incoming[f] === undefined) delete obj[f];
        else obj[f] = incoming[f];
      }
    } else {
      obj = incoming;
      for (const f of r.statusFields) {
        if (existing[f] === undefined) delete obj[f];
        else obj[f] = clone(existing[f]);
      }
    }
    const newMeta = opts.subresource === 'status' ? metaOf(obj) : meta;
    const errs: FieldError[] = [];
    if (newMeta.uid !== undefined && newMeta.uid !== '' && newMeta.uid !== oldMeta.uid) {
      errs.push(fieldErr.invalid('metadata.uid', newMeta.uid, 'field is immutable'));
    }
    newMeta.uid = oldMeta.uid;
    newMeta.creationTimestamp = oldMeta.creationTimestamp;
    newMeta.namespace = oldMeta.namespace;
    if (oldMeta.deletionTimestamp) newMeta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete newMeta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined)
      newMeta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete newMeta.deletionGracePeriodSeconds;
    delete newMeta.selfLink;
    delete newMeta.generateName;
    if (oldMeta.generateName) newMeta.generateName = oldMeta.generateName;
    if (r.kind === 'Service') {
      const spec = (obj.spec as Obj | undefined) ?? {};
      obj.spec = spec;
      const oldSpec = (existing.spec as Obj | undefined) ?? {};
      // Since Kubernetes 1.20 an update without clusterIP keeps the allocated one.
      if (!spec.clusterIP && oldSpec.clusterIP) spec.clusterIP = oldSpec.clusterIP;
      if (!spec.clusterIPs && oldSpec.clusterIPs) spec.clusterIPs = clone(oldSpec.clusterIPs);
      if (!spec.ipFamilies && oldSpec.ipFamilies) spec.ipFamilies = clone(oldSpec.ipFamilies);
      if (!spec.ipFamilyPolicy && oldSpec.ipFamilyPolicy)
        spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
    }
    if (r.kind === 'Namespace') {
      const labels = { ...((newMeta.labels as Record<string, string> | undefined) ?? {}) };
      labels['kubernetes.io/metadata.name'] = name;
      newMeta.labels = labels;
    }
    applyDefaults(r, obj);
    errs.push(
      ...validateKind(r, obj),
      ...validateObjectMeta(r, obj),
      ...validateUpdate(r, existing, obj),
    );
    if (errs.length > 0) throw invalid(gk(r), name, errs);
    if (r.generation) {
      const changed = r.specFields.some(
        (f) => JSON.stringify(existing[f]) !== JSON.stringify(obj[f]),
      );
      const gen = typeof oldMeta.generation === 'number' ? oldMeta.generation : 1;
      newMeta.generation = changed ? gen + 1 : gen;
    } else {
      delete newMeta.generation;
    }
    newMeta.resourceVersion = oldMeta.resourceVersion;
    obj.metadata = orderMeta(newMeta);
    if (sameContent(existing, obj)) return existing;
    const finalizers = (obj.metadata as Meta).finalizers;
    const finishDeletion =
      !!oldMeta.deletionTimestamp && (!Array.isArray(finalizers) || finalizers.length === 0);
    if (opts.dryRun) return obj;
    this.#rv++;
    (obj.metadata as Meta).resourceVersion = String(this.#rv);
    if (finishDeletion) {
      this.#remove(r, key, obj, existing);
      return obj;
    }
    this.#commit('MODIFIED', r, key, obj, existing);
    return obj;
  }

  /** Patches an object (PATCH) with one of the supported patch types. */
  patch(
    resource: string,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: WriteOptions = {},
  ): KubeObject {
    const r = this.#type(resource);
    return clone(
      this.withTypeMeta(r, this.patchObject(r, namespace, name, type, patch, opts)),
    ) as KubeObject;
  }

  /** {@link patch} on a resolved type, returning the stored object by reference. */
  patchObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: WriteOptions,
  ): Obj {
    const key = this.#key(r, namespace, name);
    const existing = this.#table(r).get(key);
    if (!existing) throw notFound(gr(r), name);
    let patched: unknown;
    try {
      patched = applyPatch(type, clone(this.withTypeMeta(r, existing)), patch);
    } catch (err) {
      if (err instanceof PatchError) {
        if (err.code === 400) throw badRequest(err.message);
        if (err.code === 413) {
          throw new StatusError(
            failure(413, 'RequestEntityTooLarge', `Request entity too large: ${err.message}`),
          );
        }
        throw new StatusError(
          failure(
            422,
            'Invalid',
            'the server rejected our request due to an error in our request',
            {},
          ),
        );
      }
      throw err;
    }
    const obj = this.#decode(r, patched, opts);
    const meta = metaOf(obj);
    if (String(meta.name ?? '') !== name) {
      throw badRequest(
        `the name of the object (${String(meta.name ?? '')}) does not match the name on the URL (${name})`,
      );
    }
    this.#setNamespace(r, obj, namespace);
    return this.#updateExisting(r, key, existing, obj, opts);
  }

  #remove(r: ResourceType, key: string, last: Obj, prev: Obj): void {
    if (r.kind === 'Service') this.#claimServiceIP(prev, false);
    this.#commit('DELETED', r, key, last, prev);
  }

  /** Deletes an object (DELETE). Returns the object as the API returns it. */
  delete(
    resource: string,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): KubeObject {
    const r = this.#type(resource);
    return clone(this.withTypeMeta(r, this.deleteObject(r, namespace, name, opts))) as KubeObject;
  }

  /** {@link delete} on a resolved type, returning the object by reference. */
  deleteObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions,
  ): Obj {
    const key = this.#key(r, namespace, name);
    const existing = this.#table(r).get(key);
    if (!existing) throw notFound(gr(r), name);
    const meta = metaOf(existing);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== meta.uid) {
      throw conflict(
        gr(r),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(
        gr(r),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(meta.resourceVersion)}`,
      );
    }
    const now = rfc3339(this.#now());
    if (r.kind === 'Namespace') {
      const terminating = clone(existing);
      (terminating.metadata as Meta).deletionTimestamp = now;
      (terminating.metadata as Meta) = orderMeta(terminating.metadata as Meta);
      terminating.status = { ...((terminating.status as Obj) ?? {}), phase: 'Terminating' };
      if (opts.dryRun) return terminating;
      // The namespace controller's work, done at once: every object in it goes first.
      for (const other of RESOURCES) {
        if (!other.namespaced) continue;
        for (const [k, o] of this.#sortedItems(other, name, this.#table(other))) {
          this.#rv++;
          const last = clone(o);
          (last.metadata as Meta).resourceVersion = String(this.#rv);
          this.#remove(other, k, last, o);
        }
      }
      this.#rv++;
      const last = clone(terminating);
      (last.metadata as Meta).resourceVersion = String(this.#rv);
      this.#remove(r, key, last, existing);
      return terminating;
    }
    const finalizers = meta.finalizers;
    if (Array.isArray(finalizers) && finalizers.length > 0) {
      if (meta.deletionTimestamp) return existing;
      const marked = clone(existing);
      const m = marked.metadata as Meta;
      m.deletionTimestamp = now;
      m.deletionGracePeriodSeconds = 0;
      marked.metadata = orderMeta(m);
      if (opts.dryRun) return marked;
      this.#rv++;
      (marked.metadata as Meta).resourceVersion = String(this.#rv);
      this.#commit('MODIFIED', r, key, marked, existing);
      return marked;
    }
    if (opts.dryRun) return existing;
    this.#rv++;
    const last = clone(existing);
    (last.metadata as Meta).resourceVersion = String(this.#rv);
    this.#remove(r, key, last, existing);
    return existing;
  }

  /** Deletes every object matching the list options (DELETE on a collection); returns them. */
  deleteCollectionObjects(
    r: ResourceType,
    namespace: string | undefined,
    opts: ListOptions & DeleteOptions,
  ): Obj[] {
    const { items } = this.listAt(r, namespace, {
      ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}),
    });
    return items.map((o) =>
      this.deleteObject(r, nsOf(o) || undefined, nameOf(o), opts.dryRun ? { dryRun: true } : {}),
    );
  }
}

/** The opaque continue token: base64 of `{"v","rv","start"}` like the real server's. */
export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: continueVersion, rv, start })).toString('base64url');
}

/** Decodes a continue token; a malformed one is a 400. */
export function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      v?: unknown;
      rv?: unknown;
      start?: unknown;
    };
    if (
      parsed.v !== continueVersion ||
      typeof parsed.rv !== 'number' ||
      typeof parsed.start !== 'string'
    ) {
      throw new Error('bad token');
    }
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
}

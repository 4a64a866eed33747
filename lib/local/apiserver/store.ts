/**
 * The emulated cluster's storage: objects per resource, one monotonic resourceVersion counter
 * (like etcd's revision), an event history kept for watch resume (the compaction window), and the
 * write semantics of kube-apiserver (decode, namespace checks, defaulting, validation, optimistic
 * concurrency, preconditions, finalizers, dry run). The HTTP layer and in-process callers use the
 * same methods, so both see identical results and resourceVersions.
 */
import type { KubeObject } from '../../model/index.ts';
import { cloneJson, isPlainObject, OldestFirstMap, rfc3339 } from '../../model/index.ts';
import { decodeBody } from './decode-body.ts';
import {
  alreadyExists,
  badRequest,
  conflict,
  expired,
  type FieldError,
  failure,
  invalid,
  notFound,
  OPTIMISTIC_LOCK_MESSAGE,
  StatusError,
  timeout,
} from './errors.ts';
import { EventHistory } from './event-history.ts';
import { entriesIn, listPage, resortEntries, sortEntries } from './list-page.ts';
import { gk, gr, metaOf, nameOf, nsOf, orderMeta, sameContent } from './object-meta.ts';
import { applyPatch, PatchError, type PatchType } from './patch.ts';
import { nameSuffix, randomUid } from './random.ts';
import { decodeContinue, parseRv } from './resource-version.ts';
import { apiVersionOf, RESOURCES, type ResourceType, resourceType } from './resources.ts';
import { goWritten } from './schema.ts';
import type { FieldSelector, LabelSelector } from './selectors.ts';
import {
  applyConfiguration,
  keepApplyTime,
  normalizeManagedFields,
  recordUpdate,
  sameManagedFields,
  setManagedFields,
  syncLastApplied,
  validManagedFields,
} from './server-side-apply.ts';
import { ServiceIPs } from './service-ips.ts';
import type {
  DeleteOptions,
  EventType,
  ListOptions,
  ListResult,
  Preconditions,
  StoredEvent,
  StoreOptions,
  Subscription,
  WatchSink,
  WriteOptions,
} from './store-types.ts';
import {
  keepServerMetadata,
  keepServiceAllocation,
  nextGeneration,
  withStatusRule,
} from './update-rules.ts';
import { applyDefaults, validateKind, validateObjectMeta, validateUpdate } from './validation.ts';
import { deliver, matchesSelectors, WatchHub } from './watch-hub.ts';

export { decodeContinue, encodeContinue, parseRv } from './resource-version.ts';
export type {
  DeleteOptions,
  EventType,
  FieldValidation,
  ListOptions,
  ListResult,
  Preconditions,
  StoredEvent,
  StoreOptions,
  WatchSink,
  WriteOptions,
} from './store-types.ts';

type Obj = Record<string, unknown>;
type Meta = Record<string, unknown>;

/**
 * Paginated lists whose entries are kept for their continue pages: a client pages through a list
 * within seconds, and a few lists run at once (one per informer that starts).
 */
const PAGED_LISTS_KEPT = 16;

/** The `Status` a failed patch is answered with, as kube-apiserver words it; other errors as they are. */
export function patchFailure(err: unknown): unknown {
  if (!(err instanceof PatchError)) return err;
  if (err.code === 400) return badRequest(err.message);
  if (err.code === 413) {
    return new StatusError(
      failure(413, 'RequestEntityTooLarge', `Request entity too large: ${err.message}`),
    );
  }
  // NewInvalid without field errors: its details are empty but there, and Go writes them.
  const { code, ...rest } = failure(
    422,
    'Invalid',
    'the server rejected our request due to an error in our request',
  );
  return new StatusError({ ...rest, details: {}, code });
}

/**
 * A delete's preconditions against the stored metadata: 409 Conflict when one fails, worded as
 * `rest.BeforeDelete` words it (it checks them before the storage layer does, naming the Kind:
 * `Operation cannot be fulfilled on ConfigMap "x"`, `EndpointSlice.discovery.k8s.io "x"`).
 */
function checkPreconditions(
  r: ResourceType,
  name: string,
  meta: Meta,
  pre: Preconditions | undefined,
): void {
  const kind = { group: r.group, resource: r.kind };
  if (pre?.uid && pre.uid !== meta.uid) {
    throw conflict(
      kind,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(meta.uid)}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
    throw conflict(
      kind,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(meta.resourceVersion)}). The object might have been modified`,
    );
  }
}

/** A Namespace's labels with the `kubernetes.io/metadata.name` label the server always sets. */
function withNamespaceNameLabel(labels: unknown, name: string): Record<string, string> {
  return {
    ...((labels as Record<string, string> | undefined) ?? {}),
    'kubernetes.io/metadata.name': name,
  };
}

/**
 * The object store of one emulated cluster. Stored objects are never mutated after they are
 * stored; readers get copies (in-process) or serialized JSON (HTTP).
 */
export class ClusterStore {
  readonly #tables = new Map<string, Map<string, Obj>>();
  /**
   * Each table's entries in key order, as kube-apiserver's watch cache keeps its objects ordered,
   * and the keys written since that order was made. A read merges the written keys in (a pass
   * over the entries) rather than sorting the table again: with 100,000 objects, a list after a
   * write sorted them all (54 ms) before. A table written more times than it holds objects
   * without a read drops its order (the next read sorts).
   */
  readonly #sorted = new Map<string, { entries: readonly [string, Obj][]; changed: Set<string> }>();
  /**
   * The ordered entries that paginated lists cut their first page from, by resource and version,
   * so that their continue pages are cut from the same entries: a continue page after a write
   * rebuilt the table as it was and sorted it (73 ms at 100,000 objects, for every page).
   */
  readonly #pagedAt = new OldestFirstMap<string, readonly [string, Obj][]>();
  readonly #rand: () => number;
  readonly #now: () => Date;
  /** What {@link typedJson} wrote last. */
  #lastJson: { object: Obj | undefined; text: string } = { object: undefined, text: '' };
  #rv = 0;
  readonly #history: EventHistory;
  readonly #watchers = new WatchHub();
  readonly #serviceIPs = new ServiceIPs();

  constructor(options: StoreOptions) {
    this.#rand = options.rand;
    this.#history = new EventHistory(options.compactionWindow);
    this.#now = options.now ?? (() => new Date());
    for (const r of RESOURCES) this.#tables.set(r.name, new Map());
  }

  /** The current resourceVersion of the cluster (the last committed change), as a string. */
  resourceVersion(): string {
    return String(this.#rv);
  }

  /** The highest resourceVersion no longer in the watch history (resuming at or after it works). */
  compactedResourceVersion(): number {
    return this.#history.compactedRv;
  }

  /** Drops the whole watch history, as an etcd compaction would; older resumes then get 410. */
  compact(): void {
    this.#history.compact(this.#rv);
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

  /** Every entry of the table of `r` now, in key order (do not change it). */
  #sortedEntries(r: ResourceType): readonly [string, Obj][] {
    const table = this.#table(r);
    const sorted = this.#sorted.get(r.name);
    if (sorted === undefined) {
      const entries = sortEntries(table);
      this.#sorted.set(r.name, { entries, changed: new Set() });
      return entries;
    }
    if (sorted.changed.size > 0) {
      sorted.entries = resortEntries(sorted.entries, sorted.changed, table);
      sorted.changed = new Set();
    }
    return sorted.entries;
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
    return cloneJson(this.withTypeMeta(r, o)) as KubeObject;
  }

  /** `{kind, apiVersion, ...object}` without copying the object. */
  withTypeMeta(r: ResourceType, o: Obj): Obj {
    return { kind: r.kind, apiVersion: apiVersionOf(r), ...o };
  }

  /**
   * `JSON.stringify(withTypeMeta(r, o))`, the text of the last object asked for kept: a write
   * serialises its object for its watch events (one line per event, shared by the watches) and
   * then for its answer, which is the same text (stored objects are never mutated).
   */
  typedJson(r: ResourceType, o: Obj): string {
    if (this.#lastJson.object !== o) {
      this.#lastJson = { object: o, text: JSON.stringify(this.withTypeMeta(r, o)) };
    }
    return this.#lastJson.text;
  }

  /** Copies of every object of a resource (optionally in one namespace), in key order. */
  list(resource: string, namespace?: string): KubeObject[] {
    const r = this.#type(resource);
    return this.listAt(r, namespace, {}).items.map(
      (o) => cloneJson(this.withTypeMeta(r, o)) as KubeObject,
    );
  }

  /**
   * Every entry of the table of `r` as it was at `rv`, in key order: the entries a paginated list
   * at `rv` was cut from, or the table rebuilt from the history; 410 if compacted.
   */
  #sortedAt(r: ResourceType, rv: number, what: 'list' | 'continue'): readonly [string, Obj][] {
    if (rv === this.#rv) return this.#sortedEntries(r);
    if (rv < this.#history.compactedRv) {
      throw expired(
        what === 'continue'
          ? 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.'
          : 'The resourceVersion for the provided list is too old.',
      );
    }
    const paged = this.#pagedAt.get(`${r.name}@${rv}`);
    if (paged !== undefined) return paged;
    // Unchanged since (other resources moved the version): the live table, and its kept order.
    if (!this.#history.changedSince(r.name, rv)) return this.#sortedEntries(r);
    const table = this.#history.rewind(r.name, this.#table(r), rv, (ev) =>
      this.#key(r, ev.namespace, nameOf(ev.object)),
    );
    return sortEntries(table);
  }

  /** A list with selectors, pagination and resourceVersion semantics (see docs/emulator.md). */
  listAt(r: ResourceType, namespace: string | undefined, opts: ListOptions): ListResult {
    let atRv = this.#rv;
    let start = '';
    let sorted: readonly [string, Obj][] | undefined;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    let paginate = limit > 0;
    if (opts.continue) {
      const token = decodeContinue(opts.continue);
      atRv = token.rv;
      start = token.start;
      if (atRv > this.#rv)
        throw badRequest('continue key is not valid: resource version is in the future');
      sorted = this.#sortedAt(r, atRv, 'continue');
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
        sorted = this.#sortedAt(r, rv, 'list');
      }
    }
    const page = {
      start,
      limit: paginate ? limit : 0,
      ...(opts.labelSelector ? { labelSelector: opts.labelSelector } : {}),
      ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}),
    };
    sorted ??= this.#sortedEntries(r);
    const result = listPage(entriesIn(r, namespace, sorted), page, atRv);
    if (result.continue !== undefined) {
      this.#pagedAt.set(`${r.name}@${atRv}`, sorted);
      while (this.#pagedAt.size > PAGED_LISTS_KEPT) this.#pagedAt.shift();
    }
    return result;
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
    const sorted = this.#sorted.get(r.name);
    if (sorted !== undefined && sorted.changed.add(key).size > table.size) {
      this.#sorted.delete(r.name);
    }
    const ev: StoredEvent = {
      rv: this.#rv,
      type,
      resource: r.name,
      namespace: nsOf(object),
      object,
      prev,
    };
    this.#history.append(ev);
    this.#watchers.dispatch(ev);
    return ev;
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
      for (const [, o] of entriesIn(r, namespace, this.#sortedEntries(r))) {
        if (matchesSelectors(o, sub.label, sub.field)) sink.event('ADDED', o, undefined);
      }
    } else if (typeof from === 'number') {
      for (const ev of this.#history.after(from)) deliver(sub, ev);
    }
    return this.#watchers.add(sub);
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

  #stamp(r: ResourceType, obj: Obj, dryRun: boolean): Obj {
    const meta = metaOf(obj);
    meta.uid = randomUid(this.#rand);
    meta.creationTimestamp = rfc3339(this.#now().getTime());
    if (r.generation) meta.generation = 1;
    else delete meta.generation;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    delete meta.resourceVersion;
    if (!dryRun) meta.resourceVersion = String(this.#rv + 1);
    obj.metadata = orderMeta(meta);
    if (r.kind === 'Namespace') {
      (obj.metadata as Meta).labels = withNamespaceNameLabel(meta.labels, String(meta.name));
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
    return cloneJson(
      this.withTypeMeta(r, this.createObject(r, namespace, body, opts)),
    ) as KubeObject;
  }

  /** {@link create} on a resolved type, returning the stored object by reference. */
  createObject(
    r: ResourceType,
    namespace: string | undefined,
    body: unknown,
    opts: WriteOptions,
  ): Obj {
    const obj = decodeBody(r, body, opts);
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
    // The manager owns what it sent and the defaults, not the cluster IPs the registry allocates.
    if (opts.fieldManager && !opts.applied)
      setManagedFields(meta, recordUpdate(r, undefined, obj, opts.fieldManager, undefined));
    if (r.kind === 'Service') {
      const ipErrs: FieldError[] = [];
      this.#serviceIPs.allocate(obj.spec as Obj, ipErrs);
      if (ipErrs.length > 0) throw invalid(gk(r), name, ipErrs);
    }
    obj = goWritten(r.kind, obj);
    this.#stamp(r, obj, !!opts.dryRun);
    if (opts.dryRun) return obj;
    this.#rv++;
    if (r.kind === 'Service') this.#serviceIPs.claim(obj, true);
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
    const name =
      isPlainObject(body) && isPlainObject(body.metadata) ? String(body.metadata.name ?? '') : '';
    return cloneJson(
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
    const obj = decodeBody(r, body, opts);
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
    let obj = withStatusRule(r, existing, incoming, opts.subresource === 'status');
    const newMeta = opts.subresource === 'status' ? metaOf(obj) : meta;
    // A write that leaves managedFields out (or empty) keeps them: only one that sends some
    // replaces them, which is how kubectl moves a client-side apply's fields to server-side.
    if (
      !Array.isArray(newMeta.managedFields) ||
      newMeta.managedFields.length === 0 ||
      !validManagedFields(newMeta.managedFields)
    ) {
      if (oldMeta.managedFields !== undefined) newMeta.managedFields = oldMeta.managedFields;
      else delete newMeta.managedFields;
    } else if (newMeta.managedFields !== oldMeta.managedFields) {
      newMeta.managedFields = normalizeManagedFields(newMeta.managedFields);
    }
    const errs = keepServerMetadata(newMeta, oldMeta);
    if (r.kind === 'Service') keepServiceAllocation(obj, existing);
    if (r.kind === 'Namespace') newMeta.labels = withNamespaceNameLabel(newMeta.labels, name);
    applyDefaults(r, obj);
    errs.push(
      ...validateKind(r, obj, existing),
      ...validateObjectMeta(r, obj),
      ...validateUpdate(r, existing, obj),
    );
    if (errs.length > 0) throw invalid(gk(r), name, errs);
    // As the stored object reads back: compared with the stored one for the generation.
    obj = goWritten(r.kind, obj);
    const generation = nextGeneration(r, existing, obj, oldMeta);
    if (generation === undefined) delete newMeta.generation;
    else newMeta.generation = generation;
    newMeta.resourceVersion = oldMeta.resourceVersion;
    if (opts.fieldManager && !opts.applied) {
      setManagedFields(
        newMeta,
        recordUpdate(r, existing, obj, opts.fieldManager, opts.subresource),
      );
    }
    obj.metadata = orderMeta(newMeta);
    if (sameContent(existing, obj)) {
      // Nothing but managedFields can differ, and kube-apiserver writes a change of them alone:
      // an apply that changed nothing but made its manager a co-owner (without stamping its
      // time: only an apply that changes the object does), or managedFields a write sent.
      if (opts.applied && opts.fieldManager)
        keepApplyTime(obj.metadata as Meta, oldMeta, opts.fieldManager);
      if (sameManagedFields(oldMeta.managedFields, (obj.metadata as Meta).managedFields))
        return existing;
    }
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
    return cloneJson(
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
      patched = applyPatch(type, cloneJson(this.withTypeMeta(r, existing)), patch);
    } catch (err) {
      throw patchFailure(err);
    }
    const obj = decodeBody(r, patched, opts, true);
    const meta = metaOf(obj);
    if (String(meta.name ?? '') !== name) {
      throw badRequest(
        `the name of the object (${String(meta.name ?? '')}) does not match the name on the URL (${name})`,
      );
    }
    this.#setNamespace(r, obj, namespace);
    return this.#updateExisting(r, key, existing, obj, opts);
  }

  /**
   * Server-side apply of configuration `body` by `opts.fieldManager` (see server-side-apply.ts);
   * creates the object when it does not exist.
   */
  applyObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    force: boolean,
    opts: WriteOptions,
  ): { object: Obj; created: boolean } {
    if (isPlainObject(body) && (!body.apiVersion || !body.kind)) {
      throw badRequest(
        `${!body.apiVersion ? 'apiVersion' : 'kind'} must be set in the applied configuration`,
      );
    }
    const applied = decodeBody(r, body, opts);
    const appliedName = String(metaOf(applied).name ?? '');
    if (appliedName !== name) {
      throw badRequest(
        `the name of the object (${appliedName}) does not match the name on the URL (${name})`,
      );
    }
    this.#setNamespace(r, applied, namespace);
    const key = this.#key(r, namespace, name);
    const existing = this.#table(r).get(key);
    const merged = applyConfiguration(r, existing, applied, opts.fieldManager ?? '', force);
    syncLastApplied(merged, body, opts.fieldManager ?? '');
    const writeOpts = { ...opts, applied: true };
    if (!existing) {
      return { object: this.#createDecoded(r, namespace, merged, writeOpts, false), created: true };
    }
    return { object: this.#updateExisting(r, key, existing, merged, writeOpts), created: false };
  }

  #remove(r: ResourceType, key: string, last: Obj, prev: Obj): void {
    if (r.kind === 'Service') this.#serviceIPs.claim(prev, false);
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
    return cloneJson(
      this.withTypeMeta(r, this.deleteObject(r, namespace, name, opts)),
    ) as KubeObject;
  }

  /** {@link delete} on a resolved type, returning the object by reference. */
  deleteObject(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions,
  ): Obj {
    return this.deleteWithOutcome(r, namespace, name, opts).object;
  }

  /**
   * {@link deleteObject}, also telling whether the object is gone (`removed`) or only marked for
   * deletion (finalizers, or a Namespace, which its controller empties first): kube-apiserver
   * answers the two differently (see `serveDelete`).
   */
  deleteWithOutcome(
    r: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions,
  ): { object: Obj; removed: boolean } {
    const key = this.#key(r, namespace, name);
    const existing = this.#table(r).get(key);
    if (!existing) throw notFound(gr(r), name);
    const meta = metaOf(existing);
    checkPreconditions(r, name, meta, opts.preconditions);
    const now = rfc3339(this.#now().getTime());
    if (r.kind === 'Namespace') {
      const terminating = cloneJson(existing);
      (terminating.metadata as Meta).deletionTimestamp = now;
      (terminating.metadata as Meta) = orderMeta(terminating.metadata as Meta);
      terminating.status = { ...((terminating.status as Obj) ?? {}), phase: 'Terminating' };
      if (opts.dryRun) return { object: terminating, removed: false };
      // The namespace controller's work, done at once: every object in it goes first.
      for (const other of RESOURCES) {
        if (!other.namespaced) continue;
        for (const [k, o] of entriesIn(other, name, this.#sortedEntries(other))) {
          this.#rv++;
          const last = cloneJson(o);
          (last.metadata as Meta).resourceVersion = String(this.#rv);
          this.#remove(other, k, last, o);
        }
      }
      this.#rv++;
      const last = cloneJson(terminating);
      (last.metadata as Meta).resourceVersion = String(this.#rv);
      this.#remove(r, key, last, existing);
      return { object: terminating, removed: false };
    }
    const finalizers = meta.finalizers;
    if (Array.isArray(finalizers) && finalizers.length > 0) {
      if (meta.deletionTimestamp) return { object: existing, removed: false };
      const marked = cloneJson(existing);
      const m = marked.metadata as Meta;
      m.deletionTimestamp = now;
      m.deletionGracePeriodSeconds = 0;
      marked.metadata = orderMeta(m);
      if (opts.dryRun) return { object: marked, removed: false };
      this.#rv++;
      (marked.metadata as Meta).resourceVersion = String(this.#rv);
      this.#commit('MODIFIED', r, key, marked, existing);
      return { object: marked, removed: false };
    }
    if (opts.dryRun) return { object: existing, removed: true };
    this.#rv++;
    const last = cloneJson(existing);
    (last.metadata as Meta).resourceVersion = String(this.#rv);
    this.#remove(r, key, last, existing);
    return { object: existing, removed: true };
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

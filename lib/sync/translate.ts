/**
 * Generic translation of a namespaced object between the two sides: the same code translates an
 * Endpoints, or a Secret or ConfigMap copied for a reference patch. Only the spec step differs
 * by kind (see `kinds/`).
 *
 * toHost runs in two halves around the user's patches: {@link prepareForHost} (metadata reset,
 * kind-specific spec translation) and {@link finishForHost} (reserved label keys renamed, host
 * name and namespace, markers). Patches therefore see the object with its virtual name,
 * namespace and label keys (a reference without a namespace is read in the virtual namespace)
 * and can never change or fake a marker. fromHost mirrors it: {@link prepareFromHost} strips
 * markers and restores label keys, the reverse patches run, and the caller reads the result.
 */

import type { SyncConfig } from '../config/index.ts';
import type { KubeObject, ObjectMeta } from '../model/index.ts';
import {
  cloneJson,
  getOwn,
  IMPORT_CONTROLLER,
  isMarkerAnnotation,
  isPlainObject,
  jsonEqual,
  LEADER_ANNOTATION,
  objectKindValue,
  setOwn,
  stableStringify,
} from '../model/index.ts';
import type { SyncContext } from './context.ts';
import { type FieldCopier, kindOfKind } from './kinds/index.ts';
import { resourceByKind } from './kinds.ts';
import { hostLabelKey, isRenamedLabelKey, virtualLabelKey } from './label-keys.ts';
import { isMultiNamespace } from './namespaces.ts';
import type { ObjectKey } from './types.ts';

/** The labels and annotations a sync wrote, in host form, without markers. */
export interface AppliedMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isPlainObject(value)) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') setOwn(out, k, v);
  return out;
}

/**
 * The apiVersion of `kind` (`v1` for the core kinds). A kind the project knows gets its own
 * apiVersion whatever the object claims; only an unknown kind keeps the object's.
 */
function apiVersionFor(object: KubeObject, kind: string): string {
  const known = knownApiVersion(kind);
  if (known !== undefined) return known;
  if (typeof object.apiVersion === 'string' && object.apiVersion !== '') return object.apiVersion;
  return 'v1';
}

/** apiVersion by kind, for the kinds the project knows (looked up on every translation). */
const apiVersions = new Map<string, string | undefined>();

function knownApiVersion(kind: string): string | undefined {
  if (apiVersions.has(kind)) return apiVersions.get(kind);
  const row = resourceByKind(kind);
  const version = row && (row.group === '' ? row.version : `${row.group}/${row.version}`);
  if (apiVersions.size < 64) apiVersions.set(kind, version);
  return version;
}

/**
 * First half of toHost: a deep copy of `virtual` with `apiVersion`/`kind` set, metadata reduced
 * to name, namespace, labels and annotations (uid, resourceVersion, generation, timestamps,
 * deletion fields, ownerReferences, finalizers, managedFields, generateName and selfLink are
 * reset), the leader annotation dropped and the kind's spec translated. `status` is not copied.
 */
export function prepareForHost(virtual: KubeObject, kind: string, ctx: SyncContext): KubeObject {
  return withHostSpec(prepareHeadForHost(virtual, kind), virtual, kind, ctx);
}

/**
 * The part of {@link prepareForHost} that patches confined to `metadata` can change: apiVersion,
 * kind and the reset metadata, without the spec fields. {@link withHostSpec} adds those later,
 * and only when they are needed: a resync of an unchanged object compares them in place with
 * {@link sameHostSpec} instead.
 */
export function prepareHeadForHost(virtual: KubeObject, kind: string): KubeObject {
  const meta = virtual.metadata;
  const metadata: ObjectMeta = { name: meta.name ?? '', namespace: meta.namespace ?? '' };
  const labels = stringMap(meta.labels);
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  const annotations = stringMap(meta.annotations);
  delete annotations[LEADER_ANNOTATION];
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  return { apiVersion: apiVersionFor(virtual, kind), kind, metadata };
}

/** True for the top-level fields that are not spec: the sync sets or drops them itself. */
function isHeadField(key: string): boolean {
  return key === 'metadata' || key === 'apiVersion' || key === 'kind' || key === 'status';
}

function copierOf(kind: string, key: string): FieldCopier | undefined {
  const copiers = kindOfKind(kind)?.specFields;
  return copiers !== undefined && Object.hasOwn(copiers, key) ? copiers[key] : undefined;
}

/**
 * `head` (from {@link prepareHeadForHost}, possibly patched) followed by the spec fields of
 * `virtual` in host form: deep copies, translated by the kind's rules, in the virtual object's
 * key order. A new object; `head` is not changed.
 */
export function withHostSpec(
  head: KubeObject,
  virtual: KubeObject,
  kind: string,
  ctx: SyncContext,
): KubeObject {
  const out: KubeObject = { ...head };
  const virtualNamespace = virtual.metadata.namespace ?? '';
  for (const key of Object.keys(virtual)) {
    if (isHeadField(key)) continue;
    const value = virtual[key];
    if (value === undefined) continue;
    const copier = copierOf(kind, key);
    setOwn(
      out,
      key,
      copier === undefined ? cloneJson(value) : copier.copy(value, virtualNamespace, ctx),
    );
  }
  return out;
}

/**
 * Whether `host` holds exactly the spec fields {@link withHostSpec} would give for `virtual`
 * (the comparison `sameContent` makes of them), without building them: same answer, no copy.
 */
export function sameHostSpec(
  virtual: KubeObject,
  kind: string,
  host: KubeObject,
  ctx: SyncContext,
): boolean {
  const virtualNamespace = virtual.metadata.namespace ?? '';
  for (const key of Object.keys(virtual)) {
    if (isHeadField(key)) continue;
    const value = virtual[key];
    if (value === undefined) continue;
    const copier = copierOf(kind, key);
    const same =
      copier === undefined
        ? jsonEqual(value, getOwn(host, key))
        : copier.equals(value, getOwn(host, key), virtualNamespace, ctx);
    if (!same) return false;
  }
  for (const key of Object.keys(host)) {
    if (isHeadField(key) || host[key] === undefined) continue;
    if (!Object.hasOwn(virtual, key) || virtual[key] === undefined) return false;
  }
  return true;
}

/**
 * Second half of toHost, in place on the patched copy: reserved label keys renamed, marker keys
 * a patch or the virtual object carried removed, name and namespace set to `hostKey`, then the
 * markers of docs/sync.md and the last-applied record added. Whatever the patches did, the
 * copy's identity and ownership are the sync's: `apiVersion` and `kind` are the kind's, `status`
 * is dropped, and metadata holds only name, namespace, labels and annotations (no uid,
 * resourceVersion, ownerReferences, finalizers, managedFields, generation, timestamps,
 * deletion fields, selfLink or generateName).
 */
export function finishForHost(
  patched: KubeObject,
  virtual: KubeObject,
  kind: string,
  hostKey: ObjectKey,
  ctx: SyncContext,
): KubeObject {
  const { identity, markers } = ctx;
  const applied = appliedMetadataOf(patched, ctx, true, kind);
  const virtualKey = {
    name: virtual.metadata.name ?? '',
    namespace: virtual.metadata.namespace ?? '',
  };
  const annotations: Record<string, string> = { ...applied.annotations };
  annotations[markers.objectName] = virtualKey.name;
  annotations[markers.objectNamespace] = virtualKey.namespace;
  if (typeof virtual.metadata.uid === 'string')
    annotations[markers.objectUid] = virtual.metadata.uid;
  annotations[markers.objectKind] = objectKindValue(apiVersionFor(virtual, kind), kind);
  annotations[markers.objectHostName] = hostKey.name;
  annotations[markers.objectHostNamespace] = hostKey.namespace;
  // Like vcluster (applyAnnotations), an object without annotations of its own gets no
  // managed-annotations key rather than an empty one.
  const managed = Object.keys(applied.annotations).sort().join('\n');
  if (managed !== '') annotations[markers.managedAnnotations] = managed;
  annotations[markers.lastApplied] = stableStringify(applied);
  const labels: Record<string, string> = { ...applied.labels };
  labels[markers.managedBy] = identity.name;
  labels[markers.namespace] = virtualKey.namespace;
  kindOfKind(kind)?.finishHost(labels, { key: virtualKey, virtual, ctx, copy: patched });
  patched.metadata = { name: hostKey.name, namespace: hostKey.namespace, labels, annotations };
  const owners = hostOwnerReferences(ctx);
  if (owners !== undefined) patched.metadata.ownerReferences = owners;
  else if (ownerIsUnknown(ctx)) markOwnerKept(patched.metadata, identity.name);
  patched.apiVersion = apiVersionFor(virtual, kind);
  patched.kind = kind;
  delete patched['status'];
  return patched;
}

/**
 * The non-marker labels and annotations of an object in host form. With `fromVirtualKeys`, the
 * object's label keys are virtual ones and are renamed first (a patched toHost copy); without,
 * they are already host keys (a host object). With `kind`, the labels the kind sets by its own
 * rules (its host-only labels) are left out: they are not the virtual side's to merge.
 */
export function appliedMetadataOf(
  object: KubeObject,
  ctx: SyncContext,
  fromVirtualKeys: boolean,
  kind?: string,
): AppliedMetadata {
  const { identity, markers } = ctx;
  const labels: Record<string, string> = {};
  const hostOnly = (kind === undefined ? undefined : kindOfKind(kind))?.hostOnlyLabels ?? [];
  for (const [key, value] of Object.entries(stringMap(object.metadata?.labels))) {
    if (hostOnly.includes(key)) continue;
    if (fromVirtualKeys) {
      // A virtual key that imitates a renamed reserved key would overwrite that key's value.
      if (isRenamedLabelKey(key, identity.name, identity.markerDomain)) continue;
      setOwn(labels, hostLabelKey(key, identity.name, identity.markerDomain), value);
    } else if (virtualLabelKey(key, identity.name, identity.markerDomain) !== undefined) {
      setOwn(labels, key, value);
    }
  }
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(stringMap(object.metadata?.annotations))) {
    if (!isMarkerAnnotation(key, markers)) setOwn(annotations, key, value);
  }
  return { labels, annotations };
}

/**
 * The last-applied record of a host copy, or `undefined` when it has none (or an unreadable
 * one): the copy was then made elsewhere and the virtual side wins every key once.
 */
export function lastAppliedOf(host: KubeObject, ctx: SyncContext): AppliedMetadata | undefined {
  const text = host.metadata.annotations?.[ctx.markers.lastApplied];
  if (typeof text !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isPlainObject(parsed)) return undefined;
    return { labels: stringMap(parsed['labels']), annotations: stringMap(parsed['annotations']) };
  } catch {
    return undefined;
  }
}

/**
 * First half of fromHost: a copy of `host` whose metadata holds only its name, namespace, and
 * its non-marker labels (keys restored to their virtual form) and annotations. The reverse
 * patches run on it next.
 */
export function prepareFromHost(host: KubeObject, ctx: SyncContext): KubeObject {
  const { identity } = ctx;
  const out = cloneJson(host);
  const applied = appliedMetadataOf(host, ctx, false);
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(applied.labels)) {
    const original = virtualLabelKey(key, identity.name, identity.markerDomain);
    if (original !== undefined) setOwn(labels, original, value);
  }
  out.metadata = {
    name: host.metadata.name ?? '',
    namespace: host.metadata.namespace ?? '',
    labels,
    annotations: applied.annotations,
  };
  return out;
}

/**
 * The virtual object to create for a host object that a reference names and that exists only
 * on the host: its content under the virtual key, metadata reset, marked with
 * `<domain>/controlled-by` (so it is never copied back) and the host original's name and
 * namespace (so references to it translate back to the original).
 */
export function importFromHost(
  host: KubeObject,
  kind: string,
  virtualKey: ObjectKey,
  ctx: SyncContext,
): KubeObject {
  const { markers } = ctx;
  const out: KubeObject = { apiVersion: apiVersionFor(host, kind), kind, metadata: {} };
  for (const key of Object.keys(host)) {
    if (key === 'metadata' || key === 'apiVersion' || key === 'kind' || key === 'status') continue;
    const value = host[key];
    if (value !== undefined) setOwn(out, key, cloneJson(value));
  }
  const labels = stringMap(host.metadata.labels);
  labels[markers.controlledBy] = IMPORT_CONTROLLER;
  const annotations: Record<string, string> = {};
  for (const [key, value] of Object.entries(stringMap(host.metadata.annotations))) {
    if (!isMarkerAnnotation(key, markers)) setOwn(annotations, key, value);
  }
  annotations[markers.objectHostName] = host.metadata.name ?? '';
  annotations[markers.objectHostNamespace] = host.metadata.namespace ?? '';
  out.metadata = { name: virtualKey.name, namespace: virtualKey.namespace, labels, annotations };
  return out;
}

/** The `<domain>/controlled-by` value of a virtual object (label or annotation), if any. */
export function controlledByOf(object: KubeObject, ctx: SyncContext): string | undefined {
  const key = ctx.markers.controlledBy;
  const label = object.metadata.labels?.[key];
  if (typeof label === 'string' && label !== '') return label;
  const annotation = object.metadata.annotations?.[key];
  if (typeof annotation === 'string' && annotation !== '') return annotation;
  return undefined;
}

/**
 * The owner references of every host copy: one to the virtual cluster's host Service (its name,
 * in its host namespace), as vcluster's `setOwner` gives its copies, so that the host's garbage
 * collector removes the copies with the virtual cluster. Only in single-namespace mode (an owner
 * must be in the same namespace), only when the functions read the Service's uid
 * (`identity.ownerUid`), and not when `experimental.syncSettings.setOwner` is false.
 * `controller` is false: the copy's controller is the sync, not the Service.
 */
export function hostOwnerReferences(ctx: SyncContext): KubeObject['metadata']['ownerReferences'] {
  const uid = ctx.identity.ownerUid;
  if (uid === undefined || isMultiNamespace(ctx.config) || !setOwnerOf(ctx.config))
    return undefined;
  return [{ apiVersion: 'v1', kind: 'Service', name: ctx.identity.name, uid, controller: false }];
}

/**
 * Whether copies should carry an owner reference whose uid the functions could not read (the host
 * API failed, see `identity.ownerUnknown`): then a copy keeps the one it has (see
 * {@link ownersToWrite}).
 */
function ownerIsUnknown(ctx: SyncContext): boolean {
  return (
    ctx.identity.ownerUnknown === true && !isMultiNamespace(ctx.config) && setOwnerOf(ctx.config)
  );
}

/**
 * Key, on a desired copy's metadata, of the name of the host Service whose owner reference the
 * copy keeps from the host object (the owner's uid is unknown). A symbol: it travels with the
 * desired copy through the planner's spreads, yet never reaches the API (JSON leaves it out) nor
 * the comparisons of labels and annotations (`jsonEqual` reads string keys only).
 */
const KEPT_OWNER = Symbol('kept-owner');

function markOwnerKept(metadata: ObjectMeta, serviceName: string): void {
  (metadata as ObjectMeta & { [KEPT_OWNER]?: string })[KEPT_OWNER] = serviceName;
}

/**
 * The owner references an update of `host` to `desired` writes: the desired ones, plus, when the
 * owner's uid is unknown, the host object's own references to the virtual cluster's host Service,
 * so that a failed read of the Service neither strips them nor makes every copy differ.
 */
export function ownersToWrite(desired: KubeObject, host: KubeObject): unknown[] {
  const own = desired.metadata.ownerReferences ?? [];
  const kept = (desired.metadata as ObjectMeta & { [KEPT_OWNER]?: string })[KEPT_OWNER];
  if (kept === undefined) return own;
  const hostOwners = host.metadata.ownerReferences ?? [];
  return [...own, ...hostOwners.filter((ref) => isServiceOwner(ref, kept))];
}

/** Whether `ref` is an owner reference to the v1 Service `name`. */
function isServiceOwner(ref: unknown, name: string): boolean {
  if (typeof ref !== 'object' || ref === null) return false;
  const r = ref as Record<string, unknown>;
  return r['apiVersion'] === 'v1' && r['kind'] === 'Service' && r['name'] === name;
}

/** `experimental.syncSettings.setOwner` of the file: on unless written as false (vcluster's default). */
export function setOwnerOf(config: SyncConfig): boolean {
  const experimental = config.raw['experimental'];
  const settings = isPlainObject(experimental) ? experimental['syncSettings'] : undefined;
  return !(isPlainObject(settings) && settings['setOwner'] === false);
}

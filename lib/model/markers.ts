/**
 * The labels and annotations that mark a host object as a copy made by this project (docs/sync.md,
 * "Metadata of the host copy"). The domain is a deployment setting, so every key is derived from
 * it.
 */

/** Annotation the virtual side never passes to the host (it would stop EndpointSlice mirroring). */
export const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';

/**
 * Value of `<domain>/controlled-by` on objects this project imported from the host into the
 * virtual cluster. Any value of that key keeps an object from being copied to the host.
 */
export const IMPORT_CONTROLLER = 'endpoint-sync-import';

/** Every marker key under one domain. */
export interface MarkerKeys {
  /** Annotation: virtual name of the copied object. */
  objectName: string;
  /** Annotation: virtual namespace of the copied object. */
  objectNamespace: string;
  /** Annotation: uid of the virtual object the copy was made from. */
  objectUid: string;
  /** Annotation: `/v1, Kind=Endpoints` style group/version/kind. */
  objectKind: string;
  /** Annotation: host name of the copy (on imports: of the host original). */
  objectHostName: string;
  /** Annotation: host namespace of the copy (on imports: of the host original). */
  objectHostNamespace: string;
  /** Annotation on imports: the signature that makes the two above believable. */
  importSignature: string;
  /** Annotation: sorted, newline-joined annotation keys that came from the virtual side. */
  managedAnnotations: string;
  /** Annotation: JSON of the labels and annotations the last sync wrote (three-way merge base). */
  lastApplied: string;
  /**
   * Annotation: when the signed event the copy was last written from was signed (ms since the
   * epoch); an older event never writes or deletes the copy (docs/security.md, "Replays").
   */
  eventTime: string;
  /**
   * Annotation on the copy of a referenced Secret or ConfigMap: the objects whose reference
   * patches name it (`endpoints/<namespace>/<name>`, one a line, sorted); a line `*` when it
   * may have users nobody recorded (docs/sync.md, "Copies nobody uses any more").
   */
  usedBy: string;
  /**
   * Annotation on a referencing object's copy: the virtual objects its reference patches name
   * (`Secret/<namespace>/<name>`, one a line, sorted), so that the copy of one it stops naming
   * is taken off that copy's record.
   */
  uses: string;
  /** Label: name of the virtual cluster that owns the copy. */
  managedBy: string;
  /** Label: virtual namespace of the copied object. */
  namespace: string;
  /** Label or annotation: another controller owns the object; it is never copied. */
  controlledBy: string;
}

const cache = new Map<string, MarkerKeys>();

/** The marker keys under `domain` (cached: the planner asks for them on every object). */
export function markerKeys(domain: string): MarkerKeys {
  let keys = cache.get(domain);
  if (!keys) {
    keys = Object.freeze({
      objectName: `${domain}/object-name`,
      objectNamespace: `${domain}/object-namespace`,
      objectUid: `${domain}/object-uid`,
      objectKind: `${domain}/object-kind`,
      objectHostName: `${domain}/object-host-name`,
      objectHostNamespace: `${domain}/object-host-namespace`,
      importSignature: `${domain}/import-signature`,
      managedAnnotations: `${domain}/managed-annotations`,
      lastApplied: `${domain}/last-applied`,
      eventTime: `${domain}/event-time`,
      usedBy: `${domain}/used-by`,
      uses: `${domain}/uses`,
      managedBy: `${domain}/managed-by`,
      namespace: `${domain}/namespace`,
      controlledBy: `${domain}/controlled-by`,
    });
    cache.set(domain, keys);
  }
  return keys;
}

/** True for an annotation key this project sets on host objects (never copied either way). */
export function isMarkerAnnotation(key: string, keys: MarkerKeys): boolean {
  return (
    key === keys.objectName ||
    key === keys.objectNamespace ||
    key === keys.objectUid ||
    key === keys.objectKind ||
    key === keys.objectHostName ||
    key === keys.objectHostNamespace ||
    key === keys.importSignature ||
    key === keys.managedAnnotations ||
    key === keys.lastApplied ||
    key === keys.eventTime ||
    key === keys.usedBy ||
    key === keys.uses ||
    key === LEADER_ANNOTATION
  );
}

/**
 * The `object-kind` value: Kubernetes' GroupVersionKind string, `/v1, Kind=Endpoints` for the
 * core group, `apps/v1, Kind=Deployment` otherwise.
 */
export function objectKindValue(apiVersion: string, kind: string): string {
  const gv = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return `${gv}, Kind=${kind}`;
}

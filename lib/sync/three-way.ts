/**
 * The three-way merge of labels and annotations (docs/sync.md, "What flows back"): which keys
 * changed on the host since the last sync while the virtual side kept them, so that they flow back.
 * Everything else follows the virtual side; when both sides changed a key, the virtual side wins.
 */
import { getOwn } from '../model/index.ts';
import type { AppliedMetadata } from './translate.ts';

/** Host-form keys whose host value changed since the last sync while the virtual side did not. */
export interface HostChanges {
  labels: string[];
  annotations: string[];
}

function changedOnHostOnly(
  host: Record<string, string>,
  last: Record<string, string>,
  desired: Record<string, string>,
): string[] {
  const keys = new Set([...Object.keys(host), ...Object.keys(last), ...Object.keys(desired)]);
  const out: string[] = [];
  for (const key of keys) {
    const before = getOwn(last, key);
    if (getOwn(host, key) !== before && getOwn(desired, key) === before) out.push(key);
  }
  return out.sort();
}

/**
 * Compares the host object's labels and annotations (`host`), the record of what the last sync
 * wrote (`last`) and what the virtual side translates to now (`desired`), all in host form
 * without markers. A key is a host change when its host value differs from the record and the
 * desired value does not (added, edited and removed keys alike).
 */
export function hostChanges(
  host: AppliedMetadata,
  last: AppliedMetadata,
  desired: AppliedMetadata,
): HostChanges {
  return {
    labels: changedOnHostOnly(host.labels, last.labels, desired.labels),
    annotations: changedOnHostOnly(host.annotations, last.annotations, desired.annotations),
  };
}

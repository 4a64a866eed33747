/**
 * Which virtual items may reference which Secret/ConfigMap, so that a change to a referenced
 * object re-triggers the items whose reference patches point at it. The same reverse index also
 * serves as the forwarder's companion index (companion key -> the items whose kind reads it).
 *
 * The forwarder does not load the configuration (only the functions do), so it cannot evaluate
 * reference patches itself. It over-approximates instead: every label and annotation value of an
 * item that is a valid object name is a candidate reference in the item's namespace, and
 * a `namespace/name` value a candidate in that namespace. Reference patches point at
 * such values (`metadata.annotations["<key>"]`), so no real reference is missed; a candidate that
 * is not one costs a harmless re-trigger and an unused object in the event.
 */
import { type KubeObject, type ObjectKey, objectKeyString } from '../model/index.ts';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function isName(value: string): boolean {
  return value.length > 0 && value.length <= 253 && DNS_SUBDOMAIN.test(value);
}

/** The keys an object's label and annotation values may reference (see the module comment). */
export function referenceCandidates(object: KubeObject): ObjectKey[] {
  const namespace = object.metadata.namespace ?? '';
  const seen = new Set<string>();
  const out: ObjectKey[] = [];
  const values = [
    ...Object.values(object.metadata.annotations ?? {}),
    ...Object.values(object.metadata.labels ?? {}),
  ];
  for (const raw of values) {
    if (typeof raw !== 'string') continue;
    const value = raw.trim();
    let key: ObjectKey | undefined;
    const slash = value.indexOf('/');
    if (slash < 0) {
      if (isName(value) && namespace !== '') key = { namespace, name: value };
    } else if (value.indexOf('/', slash + 1) < 0) {
      const ns = value.slice(0, slash);
      const name = value.slice(slash + 1);
      if (isName(ns) && ns.length <= 63 && isName(name)) key = { namespace: ns, name };
    }
    if (key && !seen.has(objectKeyString(key))) {
      seen.add(objectKeyString(key));
      out.push(key);
    }
  }
  return out;
}

/**
 * A reverse index: referenced key -> the keys of the objects that may reference it. It holds an
 * entry per item, so singletons are kept lean: most referenced keys have one referrer (an item's
 * own name, its Service) and an item's companion list one key, so a lone key is kept as the
 * string itself, not in a Set or an array (at 10,000 items some 30,000 Sets and 10,000 arrays
 * fewer).
 *
 * A key many items name (a label value such as `backend`, in their namespace) would otherwise be
 * one string per referrer, each built from that referrer's object: once it has a second referrer
 * the index keeps one instance of it ({@link #shared}) and every later referrer's list holds
 * that one.
 */
export class ReferenceIndex {
  readonly #forward = new Map<string, string | readonly string[]>();
  readonly #reverse = new Map<string, string | Set<string>>();
  /** Referenced keys with two referrers or more -> the instance the lists share. */
  readonly #shared = new Map<string, string>();

  /** Replaces what `referrer` references with `referenced`. */
  set(referrer: string, referenced: readonly string[]): void {
    this.delete(referrer);
    if (referenced.length === 0) return;
    const targets = referenced.map((target) => this.#shared.get(target) ?? target);
    this.#forward.set(referrer, targets.length === 1 ? targets[0]! : targets);
    for (const target of targets) {
      const present = this.#reverse.get(target);
      if (present === undefined) this.#reverse.set(target, referrer);
      else if (typeof present !== 'string') present.add(referrer);
      else if (present !== referrer) {
        this.#reverse.set(target, new Set([present, referrer]));
        this.#shared.set(target, target);
      }
    }
  }

  /** Forgets `referrer` (its object was deleted). */
  delete(referrer: string): void {
    const old = this.#forward.get(referrer);
    if (old === undefined) return;
    this.#forward.delete(referrer);
    for (const target of typeof old === 'string' ? [old] : old) {
      const present = this.#reverse.get(target);
      if (present === referrer) {
        this.#reverse.delete(target);
      } else if (present !== undefined && typeof present !== 'string') {
        present.delete(referrer);
        if (present.size === 1) {
          this.#reverse.set(target, present.values().next().value!);
          this.#shared.delete(target);
        }
      }
    }
  }

  /** The referrers of `referenced`. */
  referrers(referenced: string): string[] {
    const present = this.#reverse.get(referenced);
    if (present === undefined) return [];
    return typeof present === 'string' ? [present] : [...present];
  }

  /** What `referrer` references. */
  references(referrer: string): readonly string[] {
    const referenced = this.#forward.get(referrer);
    if (referenced === undefined) return [];
    return typeof referenced === 'string' ? [referenced] : referenced;
  }

  /** Referrers indexed. */
  get size(): number {
    return this.#forward.size;
  }
}

/**
 * Reading and writing one concrete location. The writers mutate in place: the pipeline clones
 * the object once and then edits the clone.
 */
import { formatLocation } from './format-path.ts';
import type { Location } from './segment.ts';

/** Keys that would reach an object's prototype rather than its data. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** A location cannot be written: the message says which step of which location, and why. */
export class PathAccessError extends Error {
  override name = 'PathAccessError';
  readonly location: Location;
  constructor(location: Location, reason: string) {
    super(`cannot write ${formatLocation(location) || 'the whole object'}: ${reason}`);
    this.location = location;
  }
}

/** The value at `location`, or `undefined` when any step is missing. Reads own properties only. */
export function getAt(root: unknown, location: Location): unknown {
  let current = root;
  for (const step of location) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) return undefined;
      if (step >= current.length) return undefined;
      current = current[step];
    } else {
      const key = String(step);
      if (!Object.hasOwn(current, key)) return undefined;
      current = (current as Record<string, unknown>)[key];
    }
  }
  return current;
}

/**
 * Sets the value at `location` in `root`, creating missing (or `null`) maps along the way, or an
 * array when the next step is an index. Existing values are never replaced by a container. An index may be at most the array's length (appending).
 *
 * @throws {PathAccessError} for the empty location (the root cannot be replaced in place), a
 *   step through a non-container, a key on an array, an index past the end, or a
 *   `__proto__`/`constructor`/`prototype` key.
 */
export function setAt(root: unknown, location: Location, value: unknown): void {
  if (location.length === 0)
    throw new PathAccessError(location, 'the root cannot be replaced in place');
  let current = root;
  for (let i = 0; i < location.length; i++) {
    const step = location[i]!;
    const container = asContainer(current, location, i);
    const last = i === location.length - 1;
    if (Array.isArray(container)) {
      const index = arrayIndex(container, step, location, i);
      if (last) {
        container[index] = value;
        return;
      }
      if (isAbsent(container[index])) {
        container[index] = typeof location[i + 1] === 'number' ? [] : {};
      }
      current = container[index];
    } else {
      const key = mapKey(step, location, i);
      if (last) {
        container[key] = value;
        return;
      }
      if (!Object.hasOwn(container, key) || isAbsent(container[key])) {
        container[key] = typeof location[i + 1] === 'number' ? [] : {};
      }
      current = container[key];
    }
  }
}

/**
 * Removes the value at `location` from `root`: a map entry is deleted, an array element is
 * spliced out (later elements move down one index). A missing location is left as it is.
 *
 * @throws {PathAccessError} for the empty location or a forbidden key.
 */
export function deleteAt(root: unknown, location: Location): void {
  if (location.length === 0) throw new PathAccessError(location, 'the root cannot be removed');
  for (const [i, step] of location.entries()) {
    if (typeof step === 'string' && FORBIDDEN_KEYS.has(step)) forbidden(location, i);
  }
  const parent = getAt(root, location.slice(0, -1));
  const step = location[location.length - 1]!;
  if (parent === null || typeof parent !== 'object') return;
  if (Array.isArray(parent)) {
    if (typeof step === 'number' && step < parent.length) parent.splice(step, 1);
    return;
  }
  const key = String(step);
  if (Object.hasOwn(parent, key)) delete (parent as Record<string, unknown>)[key];
}

/** `null` counts as absent so that a path can be written under a field that was nulled. */
function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function isContainer(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

function asContainer(
  current: unknown,
  location: Location,
  i: number,
): unknown[] | Record<string, unknown> {
  if (!isContainer(current)) {
    const at = formatLocation(location.slice(0, i)) || 'the root';
    throw new PathAccessError(location, `${at} is ${describe(current)}, not an object or array`);
  }
  return current as unknown[] | Record<string, unknown>;
}

function arrayIndex(
  array: unknown[],
  step: string | number,
  location: Location,
  i: number,
): number {
  const at = formatLocation(location.slice(0, i)) || 'the root';
  if (typeof step !== 'number') {
    throw new PathAccessError(
      location,
      `${at} is an array, so ${JSON.stringify(step)} is not an index`,
    );
  }
  if (!Number.isSafeInteger(step) || step < 0 || step > array.length) {
    throw new PathAccessError(
      location,
      `index ${step} is outside ${at}, which has ${array.length} elements`,
    );
  }
  return step;
}

function mapKey(step: string | number, location: Location, i: number): string {
  const key = String(step);
  if (FORBIDDEN_KEYS.has(key)) forbidden(location, i);
  return key;
}

function forbidden(location: Location, i: number): never {
  throw new PathAccessError(
    location,
    `the key ${JSON.stringify(location[i])} is refused, as writing it could change an object prototype`,
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'missing';
  return `a ${typeof value}`;
}

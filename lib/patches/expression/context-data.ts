/**
 * Builds the copy of `context` an expression sees: only the subtrees it reads (see
 * analysis.ts), with the configuration split off so its in-VM copy can be cached.
 */
import type { ExpressionContext } from '../types.ts';
import type { ContextUse } from './analysis.ts';

const TOP_LEVEL = new Set(['virtualcluster', 'hostObject', 'virtualObject', 'path']);
const VIRTUALCLUSTER = new Set(['name', 'namespace', 'config']);

/**
 * Paths grouped key by key, built once per expression so that copying or bounding a context per
 * evaluation allocates nothing for the paths (regrouping them at every level was most of a
 * context-reading fast-path evaluation): `true` where a path ends, its whole subtree being read,
 * else the keys read there, in their first path's order (an array: walked without an iterator).
 */
export type PathTree = true | readonly (readonly [key: string, read: PathTree])[];

/** How to marshal `context` for one expression; computed once per expression. */
export interface ContextPlan {
  /** What is read of the context without `virtualcluster.config` (no keys: nothing). */
  rest: PathTree;
  /** What is read of `virtualcluster.config`, or `undefined` when the config is not read. */
  config: PathTree | undefined;
  /** Cache key of the config copy this plan needs. */
  configSignature: string;
}

/** The {@link PathTree} of `paths`. */
export function pathTree(paths: readonly (readonly string[])[]): PathTree {
  if (paths.some((p) => p.length === 0)) return true;
  const groups = new Map<string, (readonly string[])[]>();
  for (const [head, ...tail] of paths as (readonly [string, ...string[]])[]) {
    const group = groups.get(head);
    if (group === undefined) groups.set(head, [tail]);
    else group.push(tail);
  }
  return [...groups].map(([key, tails]) => [key, pathTree(tails)] as const);
}

/** Splits the paths an expression reads into config paths and the rest. */
export function planContext(use: Exclude<ContextUse, 'none'>): ContextPlan {
  const rest: string[][] = [];
  const config: string[][] = [];
  let wholeConfig = false;
  const paths = use === 'all' ? [[]] : use;
  for (const read of paths) {
    // context.vcluster (vcluster's spelling) is context.virtualcluster in the sandbox.
    const p = read[0] === 'vcluster' ? ['virtualcluster', ...read.slice(1)] : read;
    const [top, second] = p;
    if (top === undefined || !TOP_LEVEL.has(top)) {
      // An unknown key can only be a prototype member (e.g. `context.hasOwnProperty`): calling
      // it needs the real object.
      rest.push([]);
      wholeConfig = true;
    } else if (top === 'virtualcluster' && (second === undefined || !VIRTUALCLUSTER.has(second))) {
      rest.push(['virtualcluster']);
      wholeConfig = true;
    } else if (top === 'virtualcluster' && second === 'config') {
      config.push(p.slice(2));
    } else rest.push([...p]);
  }
  const configPaths = wholeConfig ? [[]] : config.length > 0 ? config : undefined;
  return {
    rest: pathTree(rest),
    config: configPaths === undefined ? undefined : pathTree(configPaths),
    configSignature: configPaths === undefined ? '' : JSON.stringify(configPaths),
  };
}

/**
 * The JSON text of the context minus its config, pruned to `plan.rest`. When the plan reads the
 * config, `virtualcluster` is present so the sandbox can attach the cached config copy to it.
 */
export function contextJson(context: ExpressionContext, plan: ContextPlan): string {
  const pruned = prune(copiedLevel(context), plan.rest) as Record<string, unknown>;
  if (plan.config !== undefined && pruned.virtualcluster === undefined) pruned.virtualcluster = {};
  return JSON.stringify(pruned);
}

/** The JSON text of the config pruned to `plan.config`. */
export function configJson(context: ExpressionContext, plan: ContextPlan): string {
  const config = context.virtualcluster.config;
  if (config === undefined) return 'null';
  return JSON.stringify(prune(config, plan.config ?? true)) ?? 'null';
}

/**
 * Keeps only the subtrees `tree` reads (each needed whole). Descends only into plain objects and
 * only through own keys: a missing key or an array keeps the whole level, so methods called on
 * it (`labels.hasOwnProperty(...)`) still see the real object.
 */
export function prune(data: unknown, tree: PathTree): unknown {
  if (tree === true) return data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data;
  const obj = data as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < tree.length; i++) {
    const [key, subtree] = tree[i]!;
    if (!Object.hasOwn(obj, key) || obj[key] === undefined) return data;
    // defineProperty: a key named __proto__ must stay an own property.
    Object.defineProperty(out, key, {
      value: prune(obj[key], subtree),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * An upper bound of `contextJson(context, plan).length`, found by walking only what that copy
 * would hold and giving up (Infinity) once past `limit`. It lets the native path prove the
 * sandbox would accept the input without building the copy; anything that is not plain JSON data
 * (a `toJSON`, a class instance) also gives Infinity, and the exact check decides.
 */
export function contextSizeBound(
  context: ExpressionContext,
  plan: ContextPlan,
  limit: number,
): number {
  // The copy's top level is walked here without building the object it is made of, and each
  // read is taken apart without destructuring: together a seventh of a short context read.
  const tree = plan.rest;
  let bound = 2;
  if (tree === true) bound = jsonBound(copiedLevel(context), limit);
  else {
    for (let i = 0; i < tree.length; i++) {
      const read = tree[i]!;
      const key = read[0];
      const v =
        key === 'virtualcluster'
          ? copiedVirtualcluster(context)
          : context[key as 'hostObject' | 'virtualObject' | 'path'];
      if (v === undefined) {
        // prune keeps the whole level when a key it reads is missing.
        bound = jsonBound(copiedLevel(context), limit);
        break;
      }
      bound += stringBound(key) + 2 + prunedBound(v, read[1], limit - bound);
      if (bound > limit) return Number.POSITIVE_INFINITY;
    }
  }
  // `{}` when only the config is read; the 24 also covers the `"virtualcluster":{}` added then.
  return bound + 24 > limit ? Number.POSITIVE_INFINITY : bound + 24;
}

/** The top level of the copy {@link contextJson} prunes: the context without the config. */
function copiedLevel(context: ExpressionContext) {
  return {
    virtualcluster: copiedVirtualcluster(context),
    hostObject: context.hostObject,
    virtualObject: context.virtualObject,
    path: context.path,
  };
}

/** The copy's `virtualcluster`: its name and namespace (the config is copied apart). */
function copiedVirtualcluster(context: ExpressionContext) {
  const vc = context.virtualcluster;
  return { name: vc.name, namespace: vc.namespace };
}

/** Upper bound of the JSON length of `prune(data, tree)`, Infinity past `limit`. */
function prunedBound(data: unknown, tree: PathTree, limit: number): number {
  if (tree === true) return jsonBound(data, limit);
  if (typeof data !== 'object' || data === null || Array.isArray(data) || !isPlain(data)) {
    return jsonBound(data, limit);
  }
  const obj = data as Record<string, unknown>;
  let size = 2;
  for (let i = 0; i < tree.length; i++) {
    const read = tree[i]!;
    const key = read[0];
    const v = obj[key];
    if (v === undefined || !Object.hasOwn(obj, key)) return jsonBound(data, limit);
    size += stringBound(key) + 2 + prunedBound(v, read[1], limit - size);
    if (size > limit) return Number.POSITIVE_INFINITY;
  }
  return size;
}

/** Upper bound of `JSON.stringify(x).length`, Infinity past `limit` or for non-JSON objects. */
export function jsonBound(x: unknown, limit: number): number {
  // A scalar (what a context path most often ends at) needs no stack.
  if (typeof x !== 'object' || x === null) {
    const size = scalarBound(x);
    return size > limit ? Number.POSITIVE_INFINITY : size;
  }
  let size = 0;
  const stack: unknown[] = [x];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) size += scalarBound(v);
    else if (!isPlain(v)) return Number.POSITIVE_INFINITY;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const e of v) stack.push(e);
    } else {
      for (const k of Object.keys(v)) {
        size += stringBound(k) + 2;
        stack.push((v as Record<string, unknown>)[k]);
      }
      size += 2;
    }
    if (size > limit) return Number.POSITIVE_INFINITY;
  }
  return size;
}

/** Upper bound of the JSON length of a string, number, boolean, null or undefined. */
function scalarBound(v: unknown): number {
  if (typeof v === 'string') return stringBound(v);
  return typeof v === 'number' ? 24 : 5;
}

/** A JSON string is at most 6 characters per code unit (`\uXXXX`) and two quotes. */
function stringBound(s: string): number {
  return 6 * s.length + 2;
}

/** Plain JSON data: arrays and objects with the usual prototypes and no `toJSON`. */
function isPlain(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return true;
  const proto = Object.getPrototypeOf(v);
  if (Array.isArray(v)) return proto === Array.prototype && !('toJSON' in v);
  return (proto === Object.prototype || proto === null) && !('toJSON' in v);
}

/**
 * One walk over the YAML tree, before anything reads it, in time proportional to its size:
 * nesting depth, duplicate keys, anchors and aliases. Aliases are resolved here once (an alias
 * names the last anchor of that name before it in the file), so no later step asks the YAML
 * library to resolve one: the library searches the whole document for every alias, which is
 * quadratic in a file of many aliases. The walk keeps its own stack, so no nesting can overflow
 * the call stack.
 *
 * It also measures what the configuration becomes with every alias replaced by a copy of what
 * it names, which is what expressions receive: a file of a few kilobytes can otherwise name the
 * same big value thousands of times ("billion laughs").
 */
import {
  type Alias,
  type Document,
  isAlias,
  isCollection,
  isMap,
  isPair,
  isScalar,
  type Node,
} from 'yaml';
import { formatBytes, MAX_ALIASES, MAX_ANCHORS, MAX_DEPTH, MAX_EXPANDED_SIZE } from './limits.ts';
import type { Reporter } from './reporter.ts';
import { tooDeepMessage } from './yaml-scan.ts';

/** What the walk learnt: the node each alias names. */
export interface TreeFacts {
  aliases: ReadonlyMap<Alias, Node>;
}

/** A node being walked: its expanded size so far, and the frame of its parent. */
interface Frame {
  node: Node;
  depth: number;
  size: number;
  parent: Frame | undefined;
}

/** A unit of work: enter a child of `parent`, or leave `frame` once its children are done. */
type Step =
  | { kind: 'enter'; node: unknown; parent: Frame | undefined; depth: number }
  | { kind: 'leave'; frame: Frame };

/**
 * Walks `doc`, reporting every problem. Returns the facts when the tree may be read, `undefined`
 * when it may not (a broken alias, nesting or expansion past the limits).
 */
export function checkTree(doc: Document.Parsed, reporter: Reporter): TreeFacts | undefined {
  return new TreeWalk(reporter).run(doc);
}

/** Whether the walk goes on after a step (`false`: a limit was passed, nothing may be read). */
type Go = boolean;

/** The state of one {@link checkTree} walk; each kind of node has its step. */
class TreeWalk {
  readonly #reporter: Reporter;
  readonly #aliases = new Map<Alias, Node>();
  readonly #anchors = new Map<string, Node>();
  /** Expanded sizes of finished anchored nodes, for the aliases that name them. */
  readonly #sizes = new Map<Node, number>();
  /** Collections between the root and the current node (an alias may not name one). */
  readonly #open = new Set<Node>();
  readonly #steps: Step[] = [];
  #anchorCount = 0;
  /** False once a problem was found that does not stop the walk (a broken alias). */
  #ok = true;
  /** Expanded size of the finished top-level nodes. */
  #expanded = 0;

  constructor(reporter: Reporter) {
    this.#reporter = reporter;
  }

  run(doc: Document.Parsed): TreeFacts | undefined {
    this.#steps.push({ kind: 'enter', node: doc.contents, parent: undefined, depth: 0 });
    while (this.#steps.length > 0) {
      const step = this.#steps.pop()!;
      if (!(step.kind === 'leave' ? this.#leave(step.frame) : this.#enter(step))) return undefined;
    }
    return this.#ok ? { aliases: this.#aliases } : undefined;
  }

  #addSize(frame: Frame | undefined, size: number): void {
    if (frame === undefined) this.#expanded += size;
    else frame.size += size;
  }

  /** A collection's children are done: its expanded size is known. */
  #leave(frame: Frame): Go {
    this.#open.delete(frame.node);
    if (frame.size > MAX_EXPANDED_SIZE) {
      this.#reporter.error(frame.node, '', expansionMessage());
      return false;
    }
    if (frame.node.anchor) this.#sizes.set(frame.node, frame.size);
    this.#addSize(frame.parent, frame.size);
    return true;
  }

  #enter(step: Extract<Step, { kind: 'enter' }>): Go {
    const { node, parent, depth } = step;
    if (node === null || node === undefined) {
      this.#addSize(parent, 4);
      return true;
    }
    if (isPair(node)) {
      // A pair is not a level of nesting; its key and value are children of the collection.
      this.#steps.push(
        { kind: 'enter', node: node.value, parent, depth },
        { kind: 'enter', node: node.key, parent, depth },
      );
      this.#addSize(parent, 1);
      return true;
    }
    if (isAlias(node)) return this.#alias(node, parent);
    const anchored = node as Node;
    if (anchored.anchor && !this.#anchor(anchored)) return false;
    if (isScalar(node)) {
      const size = scalarSize(node);
      if (node.anchor) this.#sizes.set(node, size);
      this.#addSize(parent, size);
      return true;
    }
    if (!isCollection(node)) return true;
    return this.#collection(node, parent, depth + 1);
  }

  /** An alias: it must name an earlier anchor outside itself, and counts that node's size. */
  #alias(node: Alias, parent: Frame | undefined): Go {
    if (this.#aliases.size >= MAX_ALIASES) {
      this.#reporter.error(
        node,
        '',
        `the configuration has more than ${MAX_ALIASES} aliases (*name); write the values out or use fewer aliases`,
      );
      return false;
    }
    const target = this.#anchors.get(node.source);
    if (target === undefined) {
      this.#ok = false;
      this.#reporter.error(
        node,
        '',
        `alias *${shortName(node.source)} names no anchor; define &${shortName(node.source)} before this alias`,
      );
      return true;
    }
    if (this.#open.has(target)) {
      this.#ok = false;
      this.#reporter.error(
        node,
        '',
        `alias *${shortName(node.source)} is inside the node anchored as &${shortName(node.source)}, which would make an endless value; copy the value instead`,
      );
      return true;
    }
    this.#aliases.set(node, target);
    this.#addSize(parent, this.#sizes.get(target) ?? 0);
    if ((parent?.size ?? this.#expanded) > MAX_EXPANDED_SIZE) {
      this.#reporter.error(node, '', expansionMessage());
      return false;
    }
    return true;
  }

  /** An anchored node: counted, and the one its name's later aliases name. */
  #anchor(node: Node): Go {
    this.#anchorCount++;
    if (this.#anchorCount > MAX_ANCHORS) {
      this.#reporter.error(
        node,
        '',
        `the configuration has more than ${MAX_ANCHORS} anchors (&name); use fewer anchors`,
      );
      return false;
    }
    // The last anchor of a name before an alias is the one it names (YAML 1.2, 7.1).
    this.#anchors.set(node.anchor!, node);
    return true;
  }

  /** A map or a sequence at nesting `level`: its children are walked, then it is left. */
  #collection(node: Node & { items: unknown[] }, parent: Frame | undefined, level: number): Go {
    if (level > MAX_DEPTH) {
      this.#reporter.error(node, '', tooDeepMessage());
      return false;
    }
    if (isMap(node)) checkDuplicateKeys(node.items, this.#reporter);
    const frame: Frame = { node, depth: level, size: 2, parent };
    this.#open.add(node);
    this.#steps.push({ kind: 'leave', frame });
    const items = node.items;
    for (let i = items.length - 1; i >= 0; i--) {
      this.#steps.push({ kind: 'enter', node: items[i], parent: frame, depth: level });
    }
    frame.size += Math.max(0, items.length - 1);
    return true;
  }
}

/** Characters a scalar takes in JSON, roughly: its text, quoted. */
function scalarSize(node: Node): number {
  const range = node.range;
  const source = range ? range[1] - range[0] : 0;
  const value = isScalar(node) && typeof node.value === 'string' ? node.value.length : 0;
  return Math.max(source, value) + 2;
}

function expansionMessage(): string {
  return `the configuration's aliases (*name) expand it to more than ${formatBytes(MAX_EXPANDED_SIZE)}; write the repeated values out fewer times or use fewer aliases`;
}

/**
 * Reports a key that appears twice in one mapping, comparing keys by value in one pass (the YAML
 * library's own check compares every key with every other one). As in the library, only plain
 * values count: keys that are aliases, mappings or lists are never equal.
 */
function checkDuplicateKeys(items: readonly unknown[], reporter: Reporter): void {
  const seen = new Set<string>();
  for (const item of items) {
    if (!isPair(item)) continue;
    const keyNode = item.key as Node | null;
    const identity = keyIdentity(keyNode);
    if (identity === undefined) continue;
    if (seen.has(identity)) {
      const name = isScalar(keyNode) ? ` ${JSON.stringify(shortName(String(keyNode.value)))}` : '';
      reporter.error(
        keyNode,
        '',
        `duplicate key${name}: a key may appear only once in a mapping; remove one or merge them`,
      );
      continue;
    }
    seen.add(identity);
  }
}

/** A string equal for two keys exactly when the YAML library would call them duplicates. */
function keyIdentity(node: Node | null): string | undefined {
  if (node === null) return 'null:';
  if (!isScalar(node)) return undefined;
  const value = node.value;
  if (value === null || value === undefined) return 'null:';
  const kind = typeof value;
  if (kind === 'object') return undefined;
  return `${kind}:${String(value)}`;
}

/** An anchor or key name as shown in a message: at most 40 characters. */
export function shortName(name: string): string {
  return name.length > 40 ? `${name.slice(0, 37)}...` : name;
}

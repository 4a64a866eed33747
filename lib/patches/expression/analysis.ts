/**
 * What an expression reads: whether it uses `value`, and which parts of `context`. Only those
 * parts are copied into the sandbox, because copying a whole context costs about 100 us while an
 * evaluation of a typical patch costs a few.
 */
import type { Expression } from 'acorn';

/**
 * The parts of `context` an expression can observe: `'none'`, `'all'`, or a list of property
 * paths (`['virtualObject', 'metadata', 'labels', 'team']`); the subtree at the end of each path
 * is needed whole.
 */
export type ContextUse = 'none' | 'all' | readonly (readonly string[])[];

/** The result of {@link analyseExpression}. */
export interface ExpressionUse {
  /**
   * False when the expression mentions neither `value` nor `valueExists` (constants): nothing
   * is copied in. `valueExists` needs the value's kind, so it counts as a use.
   */
  value: boolean;
  context: ContextUse;
}

interface Node {
  type: string;
  [key: string]: unknown;
}

/**
 * Finds every mention of `value` and `context` in the tree. A mention of `context` that starts a
 * chain of static property reads (`context.a.b`, `context?.["a"]`) needs that path; any other
 * mention (passed to a function, spread, shadowed by a parameter, ...) needs all of it.
 */
export function analyseExpression(root: Expression): ExpressionUse {
  let value = false;
  let all = false;
  const paths: string[][] = [];
  const parents = new Map<Node, { parent: Node; key: string }>();
  const stack: Node[] = [root as unknown as Node];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const up = parents.get(node);
    if (node.type === 'Identifier' && !isPropertyName(up?.parent, up?.key ?? '')) {
      const name = node['name'];
      if (name === 'value' || name === 'valueExists') value = true;
      else if (name === 'context') {
        const path = chainFrom(node, parents);
        if (path.length === 0) all = true;
        else paths.push(path);
      }
    }
    for (const k in node) {
      const child = node[k];
      if (Array.isArray(child)) {
        for (const c of child) {
          if (isNode(c)) {
            parents.set(c, { parent: node, key: k });
            stack.push(c);
          }
        }
      } else if (isNode(child)) {
        parents.set(child, { parent: node, key: k });
        stack.push(child);
      }
    }
  }
  if (all) return { value, context: 'all' };
  if (paths.length === 0) return { value, context: 'none' };
  return { value, context: minimisePaths(paths) };
}

/** The static property path read from `id` outwards (`context.a["b"][0]` gives a, b, 0). */
function chainFrom(id: Node, parents: Map<Node, { parent: Node; key: string }>): string[] {
  const path: string[] = [];
  let cur = parents.get(id);
  while (cur !== undefined && cur.parent.type === 'MemberExpression' && cur.key === 'object') {
    const k = staticKey(cur.parent);
    if (k === undefined) break;
    path.push(k);
    cur = parents.get(cur.parent);
  }
  return path;
}

function staticKey(member: Node): string | undefined {
  const prop = member['property'] as Node;
  if (!member['computed']) {
    return prop.type === 'Identifier' ? (prop['name'] as string) : undefined;
  }
  if (prop.type === 'Literal') {
    const v = prop['value'];
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return String(v);
  }
  return undefined;
}

/** True when an identifier in this position is a property name, not a variable reference. */
function isPropertyName(parent: Node | undefined, key: string): boolean {
  if (parent === undefined) return false;
  switch (parent.type) {
    case 'MemberExpression':
      return key === 'property' && !parent['computed'];
    case 'Property':
      // `{ value }` (shorthand) reads the variable; `{ value: 1 }` names a key.
      return key === 'key' && !parent['computed'] && !parent['shorthand'];
    case 'MethodDefinition':
    case 'PropertyDefinition':
      return key === 'key' && !parent['computed'];
    default:
      return false;
  }
}

/** Drops paths that extend another path (the shorter one already brings the subtree). */
function minimisePaths(paths: string[][]): string[][] {
  const sorted = [...paths].sort((a, b) => a.length - b.length);
  const kept: string[][] = [];
  for (const p of sorted) {
    if (!kept.some((k) => k.every((seg, i) => p[i] === seg))) kept.push(p);
  }
  return kept;
}

function isNode(x: unknown): x is Node {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';
}

/**
 * The lines of a rendered object's YAML that differ from the object it was rendered from, so the
 * playground can highlight what the sync (translation, markers, patches) changed. Works on the
 * YAML text the page shows, through the one YAML library, so a line number always points at the
 * line the user sees.
 */
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { jsonEqual } from '../model/index.ts';

/** Whether `value` is a plain JSON object (not an array, not null). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The 1-based lines of `afterYaml` whose value is new or differs from the same path in `before`,
 * in ascending order. A mapping key or list item absent from `before` marks all its lines; a
 * changed scalar marks its own (from its key).
 */
export function changedLines(before: unknown, afterYaml: string): number[] {
  const counter = new LineCounter();
  const doc = parseDocument(afterYaml, { lineCounter: counter });
  const lines = new Set<number>();
  const mark = (from: number, to: number) => {
    const first = counter.linePos(from).line;
    // `to` is one past the node's last character, which may be the next line's start.
    const last = counter.linePos(Math.max(from, to - 1)).line;
    for (let line = first; line <= last; line++) lines.add(line);
  };
  const walk = (node: Node | null, old: unknown, known: boolean, from: number | undefined) => {
    const range = node?.range;
    const start = from ?? range?.[0] ?? 0;
    const end = range?.[1] ?? start + 1;
    if (!known) return mark(start, end);
    if (isMap(node)) {
      if (!isRecord(old)) return mark(start, end);
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        const keyStart = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        const value = (pair.value ?? null) as Node | null;
        const has = key !== undefined && Object.hasOwn(old, key);
        walk(value, has ? old[key] : undefined, has, keyStart);
      }
      return;
    }
    if (isSeq(node)) {
      if (!Array.isArray(old)) return mark(start, end);
      node.items.forEach((item, i) => {
        walk(item as Node, old[i], i < old.length, undefined);
      });
      return;
    }
    const value = isScalar(node) ? node.toJSON() : null;
    if (!jsonEqual(value, old)) mark(start, end);
  };
  walk(doc.contents as Node | null, before, true, undefined);
  return [...lines].sort((a, b) => a - b);
}

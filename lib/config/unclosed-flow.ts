/**
 * Where an unclosed `[` or `{` opens. The YAML library reports a flow collection that is never
 * closed where it gives up (the next line that is less indented, or the end of the file), which
 * may be far below the bracket; editors (yaml-language-server) point at the bracket itself.
 */
import { type CST, Parser } from 'yaml';

/** An opening bracket without its closing one. */
export interface UnclosedFlow {
  /** Offset of the `[` or `{` in the text. */
  offset: number;
  bracket: '[' | '{';
}

/**
 * The flow collections that open before `before` and are never closed, innermost (last opened)
 * first, found in the library's concrete syntax tree with an explicit stack (the text is already
 * within the nesting limit, but the walk must not depend on it).
 */
export function findUnclosedFlows(text: string, before: number): UnclosedFlow[] {
  const found: UnclosedFlow[] = [];
  const stack: CST.Token[] = [...new Parser().parse(text)];
  while (stack.length > 0) {
    const token = stack.pop() as CST.Token;
    switch (token.type) {
      case 'document':
        if (token.value) stack.push(token.value);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        if (token.type === 'flow-collection') {
          const close = token.start.source === '[' ? 'flow-seq-end' : 'flow-map-end';
          const opens = token.start.offset;
          if (opens < before && !token.end.some((t) => t.type === close)) {
            found.push({ offset: opens, bracket: token.start.source === '[' ? '[' : '{' });
          }
        }
        for (const item of token.items as CST.CollectionItem[]) {
          if (item.key) stack.push(item.key);
          if (item.value) stack.push(item.value);
        }
        break;
      default:
        break;
    }
  }
  return found.sort((a, b) => b.offset - a.offset);
}

/**
 * Aliases (`*name`) checked before anything reads the tree: an alias to an anchor that does not
 * exist (yet) is an error, and so is one inside the node it names, which would make the
 * configuration an endless value that `context.virtualcluster.config` could not carry.
 */
import { type Document, isAlias, isNode, visit } from 'yaml';
import type { Reporter } from './reporter.ts';

/** Reports every unresolved or self-containing alias; true when there is none. */
export function checkAliases(doc: Document.Parsed, reporter: Reporter): boolean {
  let ok = true;
  visit(doc, {
    Alias(_key, alias, path) {
      const target = alias.resolve(doc);
      if (target === undefined) {
        ok = false;
        reporter.error(
          alias,
          '',
          `alias *${alias.source} names no anchor; define &${alias.source} before this alias`,
        );
        return;
      }
      if (path.some((ancestor) => isNode(ancestor) && !isAlias(ancestor) && ancestor === target)) {
        ok = false;
        reporter.error(
          alias,
          '',
          `alias *${alias.source} is inside the node anchored as &${alias.source}, which would make an endless value; copy the value instead`,
        );
      }
    },
  });
  return ok;
}

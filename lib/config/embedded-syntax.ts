/**
 * Checks the two small languages embedded in YAML strings, expressions (SEMANTICS 5, rule 6) and
 * paths (SEMANTICS 4, rule 7), with the project's one parser of each, and reports a problem at
 * its own character in the file rather than at the start of the string.
 */
import { checkExpressionSyntax } from '../patches/expression/syntax.ts';
import { type Path, PathSyntaxError, parsePath } from '../patches/path.ts';
import { fileOffsetInScalar, offsetOfLineColumn } from './scalar-offsets.ts';
import { type Entry, type ReadContext, scalarOf } from './yaml-nodes.ts';

/** Reports an expression that is not exactly one ES expression; true when it compiles. */
export function checkExpression(ctx: ReadContext, entry: Entry, source: string): boolean {
  const problem = checkExpressionSyntax(source);
  if (problem === undefined) return true;
  const where = offsetOfLineColumn(source, problem.line, problem.column);
  ctx.reporter.error(
    placeIn(ctx, entry, where),
    entry.configPath,
    `${entry.configPath} is not a valid expression (line ${problem.line}, column ${problem.column} of the expression): ${problem.message}`,
  );
  return false;
}

/** Parses a patch path, reporting a syntax error at its character; `undefined` when invalid. */
export function checkPath(ctx: ReadContext, entry: Entry, source: string): Path | undefined {
  try {
    return parsePath(source);
  } catch (err) {
    if (!(err instanceof PathSyntaxError)) throw err;
    ctx.reporter.error(
      placeIn(ctx, entry, err.column - 1),
      entry.configPath,
      `${entry.configPath} ${JSON.stringify(source)} is not a valid path (column ${err.column}): ${err.reason}`,
    );
    return undefined;
  }
}

function placeIn(ctx: ReadContext, entry: Entry, valueOffset: number): number | Entry['place'] {
  const scalar = scalarOf(entry);
  // An alias points elsewhere in the file; report where it is used.
  if (scalar === undefined || entry.place !== entry.value) return entry.place ?? entry.keyNode;
  return fileOffsetInScalar(ctx.text, scalar, valueOffset);
}

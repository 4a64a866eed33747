/**
 * Checks the two small languages embedded in YAML strings, expressions (rule 6 of
 * docs/configuration.md) and paths (rule 7), with the project's one parser of each, and reports
 * a problem at its own character in the file rather than at the start of the string.
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
    `${entry.configPath} is not a valid expression (line ${problem.line}, column ${problem.column} of the expression): ${withoutNames(problem.message)}`,
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
      `${entry.configPath} is not a valid path (column ${err.column}): ${err.reason}`,
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

/** Words of the language a parser message may quote: they name no data. */
const KEYWORDS = new Set(
  (
    'await break case catch class const continue debugger default delete do else enum export ' +
    'extends false finally for function if import in instanceof let new null return static super ' +
    'switch this throw true try typeof var void while with yield async of get set arguments eval'
  ).split(' '),
);

/**
 * A parser message with the names it quotes withheld (`Identifier 'apiToken' has already been
 * declared`): an expression may hold a secret, and the message goes into reasons and logs. A
 * quoted single character or keyword is kept, it says what went wrong without revealing data.
 */
export function withoutNames(message: string): string {
  return message
    .replace(/^(.*Invalid regular expression): \/.*\/: /s, '$1: ')
    .replace(/'([^']*)'/g, (quoted, inner: string) =>
      inner.length <= 1 || KEYWORDS.has(inner) ? quoted : 'a name',
    );
}

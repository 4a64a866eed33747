/**
 * The error {@link parsePath} throws on a path it cannot read.
 */

/** A patch path is not valid; `column` (1-based) points into `source`. */
export class PathSyntaxError extends Error {
  override name = 'PathSyntaxError';
  /** The whole path as written. */
  readonly source: string;
  /** 1-based column of the character at which the path went wrong. */
  readonly column: number;
  /** What is wrong, without the path and column (for callers that add their own position). */
  readonly reason: string;
  constructor(source: string, column: number, reason: string) {
    super(`invalid path ${JSON.stringify(source)} at column ${column}: ${reason}`);
    this.source = source;
    this.column = column;
    this.reason = reason;
  }
}

/**
 * The error every naming helper throws on input it cannot translate.
 */

/** A name or DNS name could not be translated; `input` is what was given. */
export class NamingError extends Error {
  override name = 'NamingError';
  /**
   * The rejected input, verbatim, for in-process callers. It may be object data: the message
   * never contains it, and it must not be logged.
   */
  readonly input: string;
  constructor(message: string, input: string) {
    super(message);
    this.input = input;
  }
}

/**
 * The error every naming helper throws on input it cannot translate.
 */

/** A name or DNS name could not be translated; `input` is what was given. */
export class NamingError extends Error {
  override name = 'NamingError';
  /** The rejected input, verbatim. */
  readonly input: string;
  constructor(message: string, input: string) {
    super(message);
    this.input = input;
  }
}

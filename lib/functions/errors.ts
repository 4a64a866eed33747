/**
 * Errors of the functions layer. Each names what failed, on what, and what to do about it.
 */

/** The host cluster's credentials could not be obtained or are unusable. Nothing was sent. */
export class HostCredentialsError extends Error {
  override name = 'HostCredentialsError';
  /** The `HOST_CREDENTIALS` value (or its source kind) that failed, without secret material. */
  readonly source: string;
  /** Whether asking again later can help (a store outage yes, a malformed setting no). */
  readonly retryable: boolean;
  constructor(source: string, message: string, options: { retryable: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.source = source;
    this.retryable = options.retryable;
  }
}

/** A function setting (environment variable or option) is missing or malformed. */
export class FunctionSettingsError extends Error {
  override name = 'FunctionSettingsError';
  /** The environment variable or option at fault, e.g. `SYNC_CONCURRENCY`. */
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`${setting}: ${message}`);
    this.setting = setting;
  }
}

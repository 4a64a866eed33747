/**
 * The forwarder's structured JSON logger. One logger family for the project: AWS Lambda
 * Powertools' Logger, which the functions use too and which works outside Lambda.
 */
import { Logger } from '@aws-lambda-powertools/logger';

/** What the forwarder logs through; Powertools' `Logger` satisfies it, tests pass a recorder. */
export interface ForwarderLogger {
  debug(message: string, attributes?: Record<string, unknown>): void;
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

/** Log levels the forwarder accepts (Powertools' names). */
export type ForwarderLogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';

/**
 * A JSON logger for the forwarder: one object per line on stdout with `level`, `message`,
 * `service` (`endpoint-sync-forwarder`), `timestamp` and the attributes given. The level comes
 * from `level`, else `POWERTOOLS_LOG_LEVEL`/`LOG_LEVEL`, else INFO.
 */
export function createLogger(
  options: { level?: ForwarderLogLevel; attributes?: Record<string, unknown> } = {},
): ForwarderLogger {
  const level =
    options.level ??
    (process.env.POWERTOOLS_LOG_LEVEL as ForwarderLogLevel | undefined) ??
    (process.env.LOG_LEVEL?.toUpperCase() as ForwarderLogLevel | undefined) ??
    'INFO';
  const logger = new Logger({
    serviceName: 'endpoint-sync-forwarder',
    logLevel: level,
    persistentKeys: options.attributes ?? {},
  });
  // Powertools treats every extra argument as log content, so an absent attribute bag is not
  // passed at all rather than passed as undefined.
  return {
    debug: (message, attributes) =>
      attributes ? logger.debug(message, attributes) : logger.debug(message),
    info: (message, attributes) =>
      attributes ? logger.info(message, attributes) : logger.info(message),
    warn: (message, attributes) =>
      attributes ? logger.warn(message, attributes) : logger.warn(message),
    error: (message, attributes) =>
      attributes ? logger.error(message, attributes) : logger.error(message),
  };
}

/** A logger that drops everything (library use where the caller did not ask for logs). */
export const silentLogger: ForwarderLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

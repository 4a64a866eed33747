/**
 * What `serverless.yml` deploys a function as, for the local Lambda endpoint to describe it the
 * same way: `get-function-configuration` against `npm start` reports the memory, timeout,
 * architecture, runtime, handler and description that a deployment gets, and the local endpoint
 * gives an invocation the deployed timeout. The function's own settings win over `provider`'s,
 * as in the Serverless Framework.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The project's `serverless.yml`. */
export const SERVERLESS_FILE = fileURLToPath(new URL('../../serverless.yml', import.meta.url));

/** A function as `serverless.yml` deploys it. */
export interface DeployedFunction {
  handlerName: string;
  description: string;
  runtime: string;
  memorySize: number;
  timeoutSeconds: number;
  architecture: 'x86_64' | 'arm64';
}

/** The Serverless Framework's defaults for what a file leaves out. */
const FRAMEWORK_DEFAULTS = { memorySize: 1024, timeout: 6, architecture: 'x86_64' } as const;

/**
 * Reads function `name` (`sync`) of `serverless.yml` (or of `text`, named `file` in errors).
 * Throws an error naming the file and the field when a value is not one a deployment could have
 * (a `${...}` variable there would need the framework to resolve it).
 */
export function deployedFunction(
  name: string,
  text = readFileSync(SERVERLESS_FILE, 'utf8'),
  file = 'serverless.yml',
): DeployedFunction {
  const root = (parse(text) ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const provider = root['provider'] ?? {};
  const fn = (root['functions'] as Record<string, Record<string, unknown>> | undefined)?.[name];
  if (!fn) throw new Error(`${file}: functions.${name} is missing`);
  const pick = (field: string) =>
    fn[field] !== undefined
      ? { value: fn[field], at: `functions.${name}.${field}` }
      : { value: provider[field], at: `provider.${field}` };
  const numberField = (field: 'memorySize' | 'timeout') => {
    const { value, at } = pick(field);
    if (value === undefined) return FRAMEWORK_DEFAULTS[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new Error(`${file}: ${at} must be a whole number, as Lambda takes it`);
    }
    return value;
  };
  const stringField = (field: string, fallback: string) => {
    const { value, at } = pick(field);
    if (value === undefined) return fallback;
    if (typeof value !== 'string') throw new Error(`${file}: ${at} must be a string`);
    return value;
  };
  const architecture = stringField('architecture', FRAMEWORK_DEFAULTS.architecture);
  if (architecture !== 'x86_64' && architecture !== 'arm64') {
    throw new Error(`${file}: ${pick('architecture').at} must be x86_64 or arm64`);
  }
  return {
    handlerName: stringField('handler', 'index.handler'),
    description: stringField('description', ''),
    runtime: stringField('runtime', 'nodejs22.x'),
    memorySize: numberField('memorySize'),
    timeoutSeconds: numberField('timeout'),
    architecture,
  };
}

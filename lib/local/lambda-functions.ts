/**
 * The functions a local Lambda endpoint serves, as the Lambda API describes them: versions,
 * aliases and qualifiers (`name`, `name:qualifier`, an ARN, `?Qualifier=`), and the
 * `FunctionConfiguration` documents `list-functions`, `get-function` and
 * `get-function-configuration` answer with.
 */
import { createHash } from 'node:crypto';

/** The part of the Lambda Node.js context object the functions may use. */
export interface LambdaLikeContext {
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
  logGroupName: string;
  logStreamName: string;
  callbackWaitsForEmptyEventLoop: boolean;
  /** Milliseconds left before the invocation times out. */
  getRemainingTimeInMillis(): number;
}

/** A function served by the endpoint: the Lambda handler signature (async form). */
export type LocalFunction = (event: unknown, context: LambdaLikeContext) => Promise<unknown>;

/** A function with what the Lambda API reports about it. */
export interface LocalFunctionDefinition {
  handler: LocalFunction;
  /** `Description` (default empty). */
  description?: string;
  /** `Handler` as deployed (default `index.handler`). */
  handlerName?: string;
  /** `Runtime` (default `nodejs22.x`). */
  runtime?: string;
  /** `MemorySize` in MB (default 1024). */
  memorySize?: number;
  /** `Architectures[0]` (default `x86_64`). */
  architecture?: 'x86_64' | 'arm64';
  /** Published versions (`"1"`, `"2"`...); every version runs the same handler. */
  versions?: string[];
  /** Alias name -> the version it points at (`$LATEST` or one of `versions`). */
  aliases?: Record<string, string>;
}

/** A function, resolved for one request. */
export interface ResolvedFunction {
  name: string;
  definition: LocalFunctionDefinition;
  /** The version that runs (`$LATEST`, or the alias's version). */
  version: string;
  /** The qualifier as asked for (a version or an alias), if any. */
  qualifier?: string;
}

/** Lambda's rule for function names (the part after `function:` in an ARN). */
const FUNCTION_NAME = /^[a-zA-Z0-9-_]{1,64}$/;
const ARN = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)(?::([^:]+))?$/;
/** Lambda's partial ARN: `<account>:function:<name>[:<qualifier>]`. */
const PARTIAL_ARN = /^\d{12}:function:([^:]+)(?::([^:]+))?$/;

/**
 * `name`, `name:qualifier`, an ARN or a partial ARN (qualified or not); `?Qualifier=` wins over
 * all of them.
 */
export function parseFunctionName(
  raw: string,
  queryQualifier: string | null,
): { name: string; qualifier?: string } {
  let name = raw;
  let qualifier: string | undefined;
  const arn = ARN.exec(raw) ?? PARTIAL_ARN.exec(raw);
  if (arn) {
    name = arn[1]!;
    qualifier = arn[2];
  } else {
    const colon = raw.indexOf(':');
    if (colon > 0) {
      name = raw.slice(0, colon);
      qualifier = raw.slice(colon + 1);
    }
  }
  if (queryQualifier) qualifier = queryQualifier;
  return qualifier === undefined ? { name } : { name, qualifier };
}

/** Whether `name` is a function name Lambda would accept. */
export function validFunctionName(name: string): boolean {
  return FUNCTION_NAME.test(name);
}

/** The definitions of an endpoint, and the documents the API answers with. */
export class FunctionRegistry {
  readonly #functions: Map<string, LocalFunctionDefinition>;
  readonly #region: string;
  readonly #accountId: string;
  readonly #timeoutSeconds: number;
  /** One LastModified for the endpoint's life, as a deployment has one. */
  readonly #lastModified = lambdaTimestamp(new Date());

  constructor(
    functions: Record<string, LocalFunction | LocalFunctionDefinition>,
    options: { region: string; accountId: string; timeoutMs: number },
  ) {
    this.#functions = new Map(
      Object.entries(functions).map(([name, f]) => [
        name,
        typeof f === 'function' ? { handler: f } : f,
      ]),
    );
    for (const [name, d] of this.#functions) {
      if (!validFunctionName(name)) {
        throw new Error(
          `local Lambda: function name ${JSON.stringify(name)} is not one Lambda accepts (1-64 of a-z A-Z 0-9 - _)`,
        );
      }
      for (const [alias, version] of Object.entries(d.aliases ?? {})) {
        if (version !== '$LATEST' && !d.versions?.includes(version)) {
          throw new Error(
            `local Lambda: alias ${alias} of ${name} points at version ${version}, which is not in its versions; publish it or point the alias at $LATEST`,
          );
        }
      }
    }
    this.#region = options.region;
    this.#accountId = options.accountId;
    this.#timeoutSeconds = Math.ceil(options.timeoutMs / 1000);
  }

  /** `arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]`. */
  arn(name: string, qualifier?: string): string {
    return `arn:aws:lambda:${this.#region}:${this.#accountId}:function:${name}${qualifier ? `:${qualifier}` : ''}`;
  }

  /** The function and the version a qualifier selects, or undefined when either is unknown. */
  resolve(name: string, qualifier?: string): ResolvedFunction | undefined {
    const definition = this.#functions.get(name);
    if (!definition) return undefined;
    if (qualifier === undefined || qualifier === '$LATEST') {
      return { name, definition, version: '$LATEST', ...(qualifier ? { qualifier } : {}) };
    }
    if (definition.versions?.includes(qualifier)) {
      return { name, definition, version: qualifier, qualifier };
    }
    const aliased = definition.aliases?.[qualifier];
    if (aliased === undefined) return undefined;
    return { name, definition, version: aliased, qualifier };
  }

  /** Every function name, sorted as Lambda lists them. */
  names(): string[] {
    return [...this.#functions.keys()].sort();
  }

  /** `FunctionConfiguration` of one version of a function. */
  configuration(name: string, version: string, qualifier?: string): Record<string, unknown> {
    const d = this.#functions.get(name)!;
    const arn = this.arn(name, qualifier ?? (version === '$LATEST' ? undefined : version));
    const codeSha256 = createHash('sha256').update(`${name}:${version}`).digest('base64');
    return {
      FunctionName: name,
      FunctionArn: arn,
      Runtime: d.runtime ?? 'nodejs22.x',
      Role: `arn:aws:iam::${this.#accountId}:role/${name}-local`,
      Handler: d.handlerName ?? 'index.handler',
      CodeSize: 0,
      Description: d.description ?? '',
      Timeout: this.#timeoutSeconds,
      MemorySize: d.memorySize ?? 1024,
      LastModified: this.#lastModified,
      CodeSha256: codeSha256,
      Version: version,
      TracingConfig: { Mode: 'PassThrough' },
      RevisionId: createHash('sha256').update(`${arn}:${this.#lastModified}`).digest('hex'),
      State: 'Active',
      LastUpdateStatus: 'Successful',
      PackageType: 'Zip',
      Architectures: [d.architecture ?? 'x86_64'],
      EphemeralStorage: { Size: 512 },
      SnapStart: { ApplyOn: 'None', OptimizationStatus: 'Off' },
      LoggingConfig: { LogFormat: 'Text', LogGroup: `/aws/lambda/${name}` },
    };
  }

  /** `AliasConfiguration` documents of a function. */
  aliases(name: string): Record<string, unknown>[] {
    const d = this.#functions.get(name)!;
    return Object.entries(d.aliases ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([alias, version]) => ({
        AliasArn: this.arn(name, alias),
        Name: alias,
        FunctionVersion: version,
        Description: '',
        RevisionId: createHash('sha256').update(`${name}:${alias}:${version}`).digest('hex'),
      }));
  }

  /** The versions of a function: `$LATEST` first, then the published ones. */
  versions(name: string): string[] {
    return ['$LATEST', ...(this.#functions.get(name)!.versions ?? [])];
  }
}

/** Lambda's `LastModified` format: `2026-11-25T08:00:00.000+0000`. */
function lambdaTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+0000');
}

/**
 * A Serverless Framework plugin (listed in serverless.yml after `serverless-offline`) that makes
 * `serverless offline`'s Lambda invoke endpoint answer as Lambda does where it does not:
 *
 * - a payload that is not JSON: `400 InvalidRequestContentException`, not a `500` that the SDK
 *   and the CLI retry (and whose body echoed the payload);
 * - a function error: `errorType` is the error's name (`ContractError`, `TypeError`), not always
 *   `Error`;
 * - `InvocationType=DryRun`: `204`, not `400`; an unknown invocation type: `400`;
 * - the `$LATEST` qualifier (`?Qualifier=`, `name:$LATEST` or an ARN) selects the function;
 * - `X-Amz-Executed-Version: $LATEST` on answers, and not-found names the function's ARN.
 *
 * It wraps only the handler of that one route, and only for `serverless offline`; `package`,
 * `print` and `deploy` load it and are left alone. The local Lambda endpoint of `npm start`
 * (`lambda.ts`) needs none of this.
 */
import { createRequire } from 'node:module';
import { parseFunctionName } from './lambda-functions.ts';

const INVOKE_ROUTE = '/2015-03-31/functions/{functionName}/invocations';

/** The parts of a hapi request and response toolkit the wrapper uses. */
interface HapiRequest {
  headers: Record<string, string | undefined>;
  params: { functionName: string };
  query: Record<string, string | undefined>;
  payload: Buffer;
}
interface HapiResponse {
  statusCode: number;
  source: unknown;
  headers: Record<string, unknown>;
  header(name: string, value: string): HapiResponse;
  code(status: number): HapiResponse;
}
interface HapiToolkit {
  response(body?: unknown): HapiResponse;
}
type Handler = (request: HapiRequest, h: HapiToolkit) => Promise<HapiResponse>;
interface RouteConfig {
  method?: string;
  path?: string;
  handler?: Handler;
}

/** The error answer Lambda gives for a request it refuses (REST-JSON, code in a header). */
function refuse(h: HapiToolkit, status: number, code: string, message: string): HapiResponse {
  return h.response({ Type: 'User', message }).code(status).header('x-amzn-ErrorType', code);
}

/** The name an error's stack starts with (`ContractError: ...` -> `ContractError`). */
export function errorTypeOf(trace: unknown): string | undefined {
  const first = Array.isArray(trace) ? trace[0] : undefined;
  return typeof first === 'string' ? /^([A-Za-z_$][\w$.]*)(?::|$)/.exec(first)?.[1] : undefined;
}

/** `handler` answering as Lambda does (see the file comment); `region` for ARNs. */
export function lambdaLikeInvoke(handler: Handler, region: string): Handler {
  return async (request, h) => {
    const type = request.headers['x-amz-invocation-type'] ?? 'RequestResponse';
    if (type !== 'RequestResponse' && type !== 'Event' && type !== 'DryRun') {
      return refuse(
        h,
        400,
        'InvalidParameterValueException',
        `Invalid invocation type ${type}; use RequestResponse, Event or DryRun`,
      );
    }
    const { name, qualifier } = parseFunctionName(
      request.params.functionName,
      request.query['Qualifier'] ?? null,
    );
    const arn = `arn:aws:lambda:${region}:000000000000:function:${name}${qualifier ? `:${qualifier}` : ''}`;
    if (qualifier !== undefined && qualifier !== '$LATEST') {
      // serverless offline serves $LATEST only: no versions, no aliases.
      return refuse(h, 404, 'ResourceNotFoundException', `Function not found: ${arn}`);
    }
    request.params.functionName = name;
    if (request.payload.length > 0) {
      try {
        JSON.parse(request.payload.toString('utf8'));
      } catch {
        return refuse(
          h,
          400,
          'InvalidRequestContentException',
          'Could not parse request body into json: the payload is not valid JSON; send a JSON document',
        );
      }
    }
    const response = await handler(request, h);
    if (response.statusCode === 404) {
      return refuse(h, 404, 'ResourceNotFoundException', `Function not found: ${arn}`);
    }
    // serverless offline refuses DryRun once it knows the function exists: Lambda answers 204.
    if (type === 'DryRun') return h.response().code(204);
    if (response.statusCode === 200) {
      response.header('X-Amz-Executed-Version', '$LATEST');
      const body = response.source as { errorType?: string; trace?: unknown } | null;
      const functionError = Object.keys(response.headers).some(
        (key) => key.toLowerCase() === 'x-amz-function-error',
      );
      if (functionError && body && typeof body === 'object') {
        body.errorType = errorTypeOf(body.trace) ?? body.errorType;
      }
    }
    return response;
  };
}

/** The Serverless Framework's view of this plugin's host (only what is read). */
interface Serverless {
  processedInput?: { commands?: string[] };
  service?: { provider?: { region?: string } };
}

let patched = false;

/** Wraps the invoke route of every hapi server `serverless offline` starts in this process. */
function patchHapi(region: string): void {
  if (patched) return;
  patched = true;
  // The hapi that serverless-offline itself loads, not one this project might resolve.
  const offline = createRequire(import.meta.url).resolve('serverless-offline');
  const hapi = createRequire(offline)('@hapi/hapi') as { server(): object };
  const prototype = Object.getPrototypeOf(hapi.server()) as {
    route(config: RouteConfig | RouteConfig[]): unknown;
  };
  const route = prototype.route;
  prototype.route = function (config) {
    const wrap = (c: RouteConfig): RouteConfig =>
      c.path === INVOKE_ROUTE && c.method === 'POST' && c.handler
        ? { ...c, handler: lambdaLikeInvoke(c.handler, region) }
        : c;
    return route.call(this, Array.isArray(config) ? config.map(wrap) : wrap(config));
  };
}

/** The plugin: the Serverless Framework constructs it with the service and the CLI options. */
export default class LambdaLikeOffline {
  constructor(serverless: Serverless, options: { region?: string } = {}) {
    if (serverless.processedInput?.commands?.[0] !== 'offline') return;
    patchHapi(options.region ?? serverless.service?.provider?.region ?? 'us-east-1');
  }
}

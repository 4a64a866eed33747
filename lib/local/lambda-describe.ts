/**
 * The local Lambda endpoint's read-only operations: what the AWS CLI and SDK ask to describe the
 * functions (`ListFunctions`, `GetFunction`, `GetFunctionConfiguration`, `ListAliases`,
 * `GetAlias`, `ListVersionsByFunction`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FunctionRegistry, ResolvedFunction } from './lambda-functions.ts';
import { drain, sendError, sendJson } from './lambda-http.ts';

export type ReadOnlyOperation =
  | 'ListFunctions'
  | 'GetFunction'
  | 'GetFunctionConfiguration'
  | 'ListAliases'
  | 'GetAlias'
  | 'ListVersionsByFunction';

/** What the read-only operations need from the endpoint. */
export interface DescribeScope {
  registry: FunctionRegistry;
  /** The function a request names, or `undefined` once a 404 has been sent (and counted). */
  functionOf(
    req: IncomingMessage,
    res: ServerResponse,
    rawName: string,
    url: URL,
  ): Promise<ResolvedFunction | undefined>;
  /** Counts a request for something that does not exist. */
  countNotFound(): void;
}

/** Answers one read-only operation; `params` are the path's captures (function, alias). */
export async function describe(
  scope: DescribeScope,
  req: IncomingMessage,
  res: ServerResponse,
  operation: ReadOnlyOperation,
  params: string[],
  url: URL,
): Promise<void> {
  const { registry } = scope;
  if (operation === 'ListFunctions') {
    await drain(req);
    return sendJson(res, paginate(listFunctions(registry, url), 'Functions', url));
  }
  const fn = await scope.functionOf(req, res, params[0]!, url);
  if (!fn) return;
  await drain(req);
  const configuration = registry.configuration(fn.name, fn.version, fn.qualifier);
  switch (operation) {
    case 'GetFunction':
      // There is no code package to download: the function runs in this process.
      return sendJson(res, {
        Configuration: configuration,
        Code: { RepositoryType: 'Local' },
        Tags: {},
      });
    case 'GetFunctionConfiguration':
      return sendJson(res, configuration);
    case 'ListAliases':
      return sendJson(res, paginate(registry.aliases(fn.name), 'Aliases', url));
    case 'ListVersionsByFunction': {
      const versions = registry.versions(fn.name).map((v) => registry.configuration(fn.name, v));
      return sendJson(res, paginate(versions, 'Versions', url));
    }
    case 'GetAlias':
      return getAlias(scope, res, fn.name, params[1]!);
  }
}

/** Every function's `$LATEST` configuration, or every version's with `FunctionVersion=ALL`. */
function listFunctions(registry: FunctionRegistry, url: URL): unknown[] {
  const all = url.searchParams.get('FunctionVersion') === 'ALL';
  return registry
    .names()
    .flatMap((name) =>
      all
        ? registry.versions(name).map((v) => registry.configuration(name, v))
        : [registry.configuration(name, '$LATEST')],
    );
}

function getAlias(scope: DescribeScope, res: ServerResponse, name: string, alias: string): void {
  const found = scope.registry.aliases(name).find((a) => a['Name'] === alias);
  if (found) {
    sendJson(res, found);
    return;
  }
  scope.countNotFound();
  sendError(res, 404, 'ResourceNotFoundException', {
    Type: 'User',
    Message: `Alias not found: ${scope.registry.arn(name, alias)}`,
  });
}

/** A page of `items` as the List operations answer (`MaxItems`, `Marker`, `NextMarker`). */
function paginate(items: unknown[], key: string, url: URL): Record<string, unknown> {
  const max = Math.min(10_000, Math.max(1, Number(url.searchParams.get('MaxItems')) || 50));
  const start = Number(url.searchParams.get('Marker')) || 0;
  const page = items.slice(start, start + max);
  const next = start + max < items.length ? String(start + max) : undefined;
  return { [key]: page, ...(next ? { NextMarker: next } : {}) };
}

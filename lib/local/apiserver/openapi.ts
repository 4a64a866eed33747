/**
 * `/openapi/v2` and `/openapi/v3`: the upstream Kubernetes OpenAPI document of the emulated
 * version, trimmed to the served kinds (vendor/openapi-v2.json, made by
 * scripts/vendor-kubernetes-api.ts; source in vendor/SOURCE.json). kubectl reads v3 to find out
 * whether the server validates fields itself (the `fieldValidation` parameter of PATCH), for
 * `explain`, and for apply's merge keys; without it `create -f`/`apply -f` needed
 * `--validate=false`.
 *
 * The v3 documents are derived from v2 as kube-apiserver derives its own: one document per
 * group/version, `#/definitions/` references become `#/components/schemas/`, a reference with a
 * description becomes `allOf: [{$ref}]`, body parameters become request bodies and every shared
 * parameter is written out in place. v2 is served as JSON; a client that accepts only its
 * protobuf form gets 406, which client-go treats as "no v2" and kubectl then uses v3.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EMULATED_VERSION } from './discovery.ts';
import { apiVersionOf, RESOURCES } from './resources.ts';

type Json = Record<string, unknown>;

interface Doc {
  body: string;
  hash: string;
}

let v2: Json | undefined;
let v2Doc: Doc | undefined;
const v3Docs = new Map<string, Doc>();

function swagger(): Json {
  v2 ??= JSON.parse(
    readFileSync(new URL('./vendor/openapi-v2.json', import.meta.url), 'utf8'),
  ) as Json;
  return v2;
}

function doc(value: unknown): Doc {
  const body = JSON.stringify(value);
  return { body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

/** The vendored OpenAPI definitions, by name (`io.k8s.api.core.v1.Service`). */
export function swaggerDefinitions(): Record<string, Json> {
  return swagger().definitions as Record<string, Json>;
}

/** The v2 document (JSON). */
export function openapiV2(): Doc {
  v2Doc ??= doc(swagger());
  return v2Doc;
}

/** The path prefix of each served group/version in `/openapi/v3` (`api/v1`, `apis/apps/v1`). */
export function groupVersionPaths(): string[] {
  const out = new Set<string>();
  for (const r of RESOURCES) out.add(r.group ? `apis/${apiVersionOf(r)}` : `api/${r.version}`);
  return [...out].sort();
}

/** `/openapi/v3`: where each group/version document is, with its content hash. */
export function openapiV3Index(): Json {
  const paths: Record<string, unknown> = {};
  for (const gv of groupVersionPaths()) {
    const d = openapiV3(gv);
    if (d) paths[gv] = { serverRelativeURL: `/openapi/v3/${gv}?hash=${d.hash}` };
  }
  return { paths };
}

function rewrite(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(rewrite);
  if (!v || typeof v !== 'object') return v;
  const o = v as Json;
  const out: Json = {};
  for (const [k, e] of Object.entries(o)) {
    if (k === '$ref' && typeof e === 'string') continue;
    out[k] = rewrite(e);
  }
  if (typeof o.$ref === 'string') {
    const ref = o.$ref.replace('#/definitions/', '#/components/schemas/');
    // OpenAPI 3.0 ignores the siblings of a $ref; the upstream v3 keeps them beside an allOf.
    return Object.keys(out).length === 0 ? { $ref: ref } : { allOf: [{ $ref: ref }], ...out };
  }
  return out;
}

function refsOf(v: unknown, out: Set<string>): void {
  if (Array.isArray(v)) for (const e of v) refsOf(e, out);
  else if (v && typeof v === 'object') {
    for (const [k, e] of Object.entries(v)) {
      if (k === '$ref' && typeof e === 'string' && e.startsWith('#/definitions/'))
        out.add(e.slice('#/definitions/'.length));
      else refsOf(e, out);
    }
  }
}

function parameter(p: Json, shared: Record<string, Json>): Json | undefined {
  const resolved = typeof p.$ref === 'string' ? shared[p.$ref.replace('#/parameters/', '')] : p;
  if (!resolved) return undefined;
  const { type, uniqueItems, format, items, schema, ...rest } = resolved;
  if (rest.in === 'body') return undefined;
  const s: Json = {};
  if (type !== undefined) s.type = type;
  if (format !== undefined) s.format = format;
  if (items !== undefined) s.items = items;
  if (uniqueItems !== undefined) s.uniqueItems = uniqueItems;
  return { ...rest, schema: schema ? rewrite(schema) : s };
}

function operation(op: Json, shared: Record<string, Json>): Json {
  const { parameters, responses, consumes, produces, schemes: _s, ...rest } = op;
  const out: Json = { ...rest };
  const params: Json[] = [];
  for (const p of (parameters ?? []) as Json[]) {
    const resolved = typeof p.$ref === 'string' ? shared[p.$ref.replace('#/parameters/', '')] : p;
    if (resolved?.in === 'body') {
      const types = ((consumes as string[] | undefined) ?? ['*/*']).filter(Boolean);
      out.requestBody = {
        content: Object.fromEntries(types.map((t) => [t, { schema: rewrite(resolved.schema) }])),
        required: true,
      };
      continue;
    }
    const conv = parameter(p, shared);
    if (conv) params.push(conv);
  }
  if (params.length > 0) out.parameters = params;
  const resp: Json = {};
  for (const [code, r] of Object.entries((responses ?? {}) as Record<string, Json>)) {
    const entry: Json = { description: r.description ?? '' };
    if (r.schema) {
      const types = (produces as string[] | undefined) ?? ['application/json'];
      entry.content = Object.fromEntries(types.map((t) => [t, { schema: rewrite(r.schema) }]));
    }
    resp[code] = entry;
  }
  out.responses = resp;
  return out;
}

/** The v3 document of one group/version (`api/v1`, `apis/apps/v1`); undefined if not served. */
export function openapiV3(gv: string): Doc | undefined {
  const cached = v3Docs.get(gv);
  if (cached) return cached;
  if (!groupVersionPaths().includes(gv)) return undefined;
  const src = swagger();
  const shared = (src.parameters ?? {}) as Record<string, Json>;
  const defs = src.definitions as Record<string, Json>;
  const paths: Json = {};
  const prefix = `/${gv}/`;
  for (const [p, item] of Object.entries(src.paths as Record<string, Json>)) {
    if (!p.startsWith(prefix)) continue;
    const out: Json = {};
    for (const [k, v] of Object.entries(item)) {
      if (k === 'parameters') {
        out.parameters = (v as Json[]).map((x) => parameter(x, shared)).filter(Boolean);
      } else {
        out[k] = operation(v as Json, shared);
      }
    }
    paths[p] = out;
  }
  // The schemas a group/version's paths reach, plus every served kind of it (for explain).
  const wanted = new Set<string>();
  refsOf(
    src.paths &&
      Object.fromEntries(Object.entries(src.paths as Json).filter(([p]) => p.startsWith(prefix))),
    wanted,
  );
  refsOf(Object.values(shared), wanted);
  const schemas: Json = {};
  const queue = [...wanted];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (Object.hasOwn(schemas, name) || !defs[name]) continue;
    schemas[name] = rewrite(defs[name]);
    const more = new Set<string>();
    refsOf(defs[name], more);
    queue.push(...more);
  }
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((k) => [k, schemas[k]]),
  );
  const d = doc({
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: EMULATED_VERSION.gitVersion },
    paths,
    components: {
      schemas: sorted,
      securitySchemes: {
        BearerToken: {
          type: 'apiKey',
          description: 'Bearer Token authentication',
          name: 'authorization',
          in: 'header',
        },
      },
    },
  });
  v3Docs.set(gv, d);
  return d;
}

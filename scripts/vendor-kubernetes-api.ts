/**
 * Regenerates the emulator's vendored Kubernetes API data (lib/local/apiserver/vendor/) from the
 * upstream sources, trimmed to the kinds the emulator serves:
 *
 * - `openapi-v2.json`: the definitions and paths of Kubernetes' own OpenAPI v2 document
 *   (`api/openapi-spec/swagger.json` of a release branch) that the served resources reach;
 * - `protobuf.json`: a protobufjs descriptor of the `generated.proto` messages (k8s.io/api and
 *   k8s.io/apimachinery at the same release) that the served kinds reach, plus `runtime.Unknown`,
 *   the envelope of every protobuf body.
 *
 * Usage:
 *   node scripts/vendor-kubernetes-api.ts --swagger swagger.json --protos DIR --source TEXT
 * where DIR holds `k8s.io/api/<group>/<version>/generated.proto` and
 * `k8s.io/apimachinery/pkg/.../generated.proto` as their import paths name them, and TEXT says
 * where they came from (written into vendor/SOURCE.json). Nothing is edited by hand.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import protobuf from 'protobufjs';
import { apiVersionOf, RESOURCES } from '../lib/local/apiserver/resources.ts';

type Json = Record<string, unknown>;

const { values } = parseArgs({
  options: {
    swagger: { type: 'string' },
    protos: { type: 'string' },
    source: { type: 'string' },
    out: { type: 'string', default: 'lib/local/apiserver/vendor' },
  },
});
if (!values.swagger || !values.protos || !values.source) {
  process.stderr.write(
    'usage: vendor-kubernetes-api.ts --swagger FILE --protos DIR --source TEXT\n',
  );
  process.exit(2);
}

/** Every `$ref` target name under `v` (`#/definitions/X` -> X). */
function refs(v: unknown, out: Set<string>): void {
  if (Array.isArray(v)) for (const e of v) refs(e, out);
  else if (v && typeof v === 'object') {
    for (const [k, e] of Object.entries(v)) {
      if (k === '$ref' && typeof e === 'string')
        out.add(e.replace(/^#\/(definitions|parameters)\//, ''));
      else refs(e, out);
    }
  }
}

/** The path templates of a served resource (list, item, subresources, watch forms). */
function servedPath(p: string): boolean {
  for (const r of RESOURCES) {
    const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    const nsPart = r.namespaced ? '(/namespaces/\\{namespace\\})?' : '';
    const subs = r.subresources.map((s) => `|/\\{name\\}/${s}`).join('');
    const re = new RegExp(`^${prefix}(/watch)?${nsPart}/${r.name}(/\\{name\\}${subs})?$`);
    if (re.test(p)) return true;
  }
  return false;
}

function trimSwagger(doc: Json): Json {
  const defs = doc.definitions as Record<string, Json>;
  const params = doc.parameters as Record<string, Json>;
  const served = new Set(RESOURCES.map((r) => `${apiVersionOf(r)}/${r.kind}`));
  const paths: Record<string, unknown> = {};
  for (const [p, ops] of Object.entries(doc.paths as Record<string, Json>)) {
    if (servedPath(p)) paths[p] = ops;
  }
  const wanted = new Set<string>();
  for (const [name, def] of Object.entries(defs)) {
    const gvks = (def['x-kubernetes-group-version-kind'] ?? []) as Json[];
    for (const g of gvks) {
      const av = g.group ? `${g.group}/${g.version}` : String(g.version);
      if (
        served.has(`${av}/${g.kind}`) ||
        served.has(`${av}/${String(g.kind).replace(/List$/, '')}`)
      )
        wanted.add(name);
    }
  }
  refs(paths, wanted);
  const keepDefs: Record<string, unknown> = {};
  const keepParams: Record<string, unknown> = {};
  const queue = [...wanted];
  while (queue.length > 0) {
    const name = queue.pop()!;
    const target = defs[name] ? keepDefs : params[name] ? keepParams : undefined;
    if (!target || Object.hasOwn(target, name)) continue;
    const body = defs[name] ?? params[name];
    target[name] = body;
    const more = new Set<string>();
    refs(body, more);
    queue.push(...more);
  }
  const sorted = (o: Record<string, unknown>) =>
    Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  return {
    swagger: doc.swagger,
    info: doc.info,
    paths: sorted(paths),
    definitions: sorted(keepDefs),
    parameters: sorted(keepParams),
    securityDefinitions: doc.securityDefinitions,
    security: doc.security,
  };
}

function protoPackage(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '');
  return `k8s.io.api.${g}.${version}`;
}

function trimProtos(dir: string): Json {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(dir, target);
  const files = new Set<string>(['k8s.io/apimachinery/pkg/runtime/generated.proto']);
  for (const r of RESOURCES) {
    const pkg = protoPackage(r.group, r.version)
      .replace(/^k8s\.io\.api\./, '')
      .replaceAll('.', '/');
    files.add(`k8s.io/api/${pkg}/generated.proto`);
  }
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  const reached = new Set<string>();
  const visit = (t: protobuf.Type) => {
    const name = t.fullName.slice(1);
    if (reached.has(name)) return;
    reached.add(name);
    for (const f of t.fieldsArray)
      if (f.resolvedType instanceof protobuf.Type) visit(f.resolvedType);
  };
  visit(root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'));
  for (const r of RESOURCES)
    visit(root.lookupType(`${protoPackage(r.group, r.version)}.${r.kind}`));
  const prune = (ns: Json, prefix: string): Json | undefined => {
    const nested = ns.nested as Record<string, Json> | undefined;
    const out: Json = {};
    if (ns.fields) {
      if (!reached.has(prefix)) return undefined;
      out.fields = Object.fromEntries(
        Object.entries(ns.fields as Record<string, Json>).map(([k, f]) => [
          k,
          { ...f, options: undefined, comment: undefined },
        ]),
      );
    }
    if (nested) {
      const kept: Record<string, Json> = {};
      for (const [k, v] of Object.entries(nested)) {
        const p = prune(v, prefix ? `${prefix}.${k}` : k);
        if (p) kept[k] = p;
      }
      if (Object.keys(kept).length > 0) out.nested = kept;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };
  return prune(root.toJSON() as Json, '') ?? {};
}

const swagger = JSON.parse(readFileSync(values.swagger, 'utf8')) as Json;
const out = values.out!;
writeFileSync(path.join(out, 'openapi-v2.json'), `${JSON.stringify(trimSwagger(swagger))}\n`);
writeFileSync(path.join(out, 'protobuf.json'), `${JSON.stringify(trimProtos(values.protos))}\n`);
writeFileSync(
  path.join(out, 'SOURCE.json'),
  `${JSON.stringify(
    {
      source: values.source,
      kinds: RESOURCES.map((r) => `${apiVersionOf(r)}/${r.kind}`),
      generatedBy: 'scripts/vendor-kubernetes-api.ts',
    },
    null,
    2,
  )}\n`,
);

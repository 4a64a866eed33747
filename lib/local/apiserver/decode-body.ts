/**
 * A write's body turned into the object to store, as kube-apiserver's decoder does it: it must be
 * an object of this kind and apiVersion (400 otherwise), no deeper than the nesting limit, typed
 * like the Go struct (400 on a mistyped field), with unknown fields dropped and reported by
 * `fieldValidation` (warning, or 400 when Strict).
 */
import { isPlainObject } from '../../model/index.ts';
import { badRequest } from './errors.ts';
import { depthMessage, jsonProblem, MAX_NESTING_DEPTH, nestsDeeperThan } from './json-limits.ts';
import { stripTypeMeta } from './object-meta.ts';
import { apiVersionOf, type ResourceType } from './resources.ts';
import { DecodeError, decode } from './schema.ts';
import type { WriteOptions } from './store-types.ts';

type Obj = Record<string, unknown>;

function checkTypeMeta(r: ResourceType, body: Obj): void {
  const expected = apiVersionOf(r);
  if (body.apiVersion !== undefined && body.apiVersion !== '' && body.apiVersion !== expected) {
    throw badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${expected})`,
    );
  }
  if (body.kind !== undefined && body.kind !== '' && body.kind !== r.kind) {
    throw badRequest(
      `${String(body.kind)} in version "${r.version}" cannot be handled as a ${r.kind}: no kind "${String(body.kind)}" is registered for version "${expected}" in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"`,
    );
  }
}

/**
 * Decodes a write body (or, `patched`, a patch result) of kind `r`; throws a 400 StatusError
 * when it cannot.
 */
export function decodeBody(
  r: ResourceType,
  body: unknown,
  opts: WriteOptions,
  patched = false,
): Obj {
  if (!isPlainObject(body)) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${r.kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  // Also covers in-process callers and the results of patches, which no body check saw.
  const tooDeep = nestsDeeperThan(body, MAX_NESTING_DEPTH)
    ? jsonProblem(body, { maxDepth: MAX_NESTING_DEPTH, jsonTypesOnly: false })
    : undefined;
  if (tooDeep) {
    throw badRequest(
      `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${depthMessage(tooDeep)}`,
    );
  }
  checkTypeMeta(r, body);
  let decoded: ReturnType<typeof decode>;
  try {
    decoded = decode(r.kind, body);
  } catch (err) {
    if (err instanceof DecodeError) {
      throw badRequest(
        `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${err.message}`,
      );
    }
    throw err;
  }
  if (decoded.unknownFields.length > 0) {
    const mode = opts.fieldValidation ?? 'Warn';
    if (mode === 'Strict') {
      const why = `strict decoding error: ${decoded.unknownFields.map((f) => `unknown field "${f}"`).join(', ')}`;
      // A body is refused like any other decoding error. A patch's result is refused by
      // kube-apiserver with a 422 that quotes the whole patched object; the emulator's messages
      // carry no object data, so it answers the 400 with the reason alone.
      throw badRequest(
        patched
          ? why
          : `${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${why}`,
      );
    }
    if (mode === 'Warn')
      for (const f of decoded.unknownFields) opts.warnings?.push(`unknown field "${f}"`);
  }
  const obj = stripTypeMeta(decoded.value);
  obj.metadata = isPlainObject(obj.metadata) ? { ...obj.metadata } : {};
  return obj;
}

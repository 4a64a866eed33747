/**
 * Request bodies in `application/vnd.kubernetes.protobuf`, the encoding kubectl's typed clients
 * send (`kubectl create namespace|configmap|secret|service|deployment ...`, `auth can-i`). A body
 * is the 4-byte prefix `k8s\0` and a `runtime.Unknown` envelope whose `typeMeta` names the kind and
 * whose `raw` is that kind's message, laid out by the upstream `generated.proto` files (vendored,
 * trimmed to the served kinds: vendor/protobuf.json, see vendor/SOURCE.json).
 *
 * The wire is read here, field by field, with the vendored descriptor giving field numbers and
 * types, rather than by protobufjs's generated decoders: map keys are data (a key `__proto__` is
 * stored as a key, never as a prototype), nesting is bounded like JSON bodies, and the
 * apimachinery types with their own JSON form (Time, IntOrString, Quantity, RawExtension,
 * FieldsV1) become what their JSON would be. Go writes every non-pointer field, so empty strings,
 * zero numbers and `false` are read as absent, as `omitempty` would leave them out of JSON.
 */
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { setOwn } from '../../model/index.ts';
import { badRequest, StatusError } from './errors.ts';
import { MAX_NESTING_DEPTH } from './json-limits.ts';
import { apiVersionOf, RESOURCES } from './resources.ts';

type Obj = Record<string, unknown>;

/** The protobuf media type kube-apiserver accepts. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

let root: protobuf.Root | undefined;

function types(): protobuf.Root {
  root ??= protobuf.Root.fromJSON(
    JSON.parse(readFileSync(new URL('./vendor/protobuf.json', import.meta.url), 'utf8')),
  );
  return root;
}

/** The proto package of a group/version (`''/v1` -> `k8s.io.api.core.v1`). */
export function protoPackage(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '').replace(/\.authorization$/, '');
  return `k8s.io.api.${g}.${version}`;
}

class Malformed extends Error {}

function rfc3339(seconds: number, nanos: number, micro: boolean): string {
  const iso = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '');
  return micro ? `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${iso}Z`;
}

function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  const n = Number(String(v));
  if (!Number.isSafeInteger(n)) throw new Malformed('integer out of range');
  return n;
}

function parseRaw(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new Malformed('an embedded object (RawExtension/FieldsV1) is not JSON');
  }
}

/** The JSON form of the apimachinery types that have their own; undefined for others. */
function special(type: protobuf.Type, m: Obj): { value: unknown } | undefined {
  switch (type.fullName.slice(1)) {
    case `${META}.Time`:
      return { value: rfc3339(toNumber(m.seconds ?? 0), 0, false) };
    case `${META}.MicroTime`:
      return { value: rfc3339(toNumber(m.seconds ?? 0), toNumber(m.nanos ?? 0), true) };
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return { value: m.type === 1 ? (m.strVal ?? '') : (m.intVal ?? 0) };
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { value: m.string ?? '' };
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
      return { value: m.raw instanceof Uint8Array ? parseRaw(m.raw) : undefined };
    case `${META}.FieldsV1`:
      return { value: m.Raw instanceof Uint8Array ? parseRaw(m.Raw) : undefined };
    default:
      return undefined;
  }
}

/** Messages whose bytes field is not base64 in JSON: embedded JSON, or the envelope's body. */
const RAW_HOLDERS = new Set([
  'k8s.io.apimachinery.pkg.runtime.RawExtension',
  `${META}.FieldsV1`,
  'k8s.io.apimachinery.pkg.runtime.Unknown',
]);

function readScalar(field: protobuf.Field, type: string, reader: protobuf.Reader): unknown {
  switch (type) {
    case 'string':
      return reader.string();
    case 'bytes': {
      const b = reader.bytes();
      return RAW_HOLDERS.has(field.parent?.fullName.slice(1) ?? '')
        ? b
        : Buffer.from(b).toString('base64');
    }
    case 'bool':
      return reader.bool();
    case 'double':
      return reader.double();
    case 'float':
      return reader.float();
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return toNumber(reader[type]());
    case 'int32':
    case 'uint32':
    case 'sint32':
    case 'fixed32':
    case 'sfixed32':
      return reader[type]();
    default:
      throw new Malformed(`field ${field.name} has an unsupported type`);
  }
}

function readValue(
  field: protobuf.Field,
  typeName: string,
  resolved: protobuf.Type | null,
  reader: protobuf.Reader,
  depth: number,
): unknown {
  if (resolved) {
    const end = reader.uint32() + reader.pos;
    if (end > reader.len) throw new Malformed('a message is longer than the body');
    return readMessage(resolved, reader, end, depth + 1);
  }
  return readScalar(field, typeName, reader);
}

/**
 * Skips a field the descriptor does not know. Groups (wire types 3 and 4) are refused: no
 * Kubernetes message uses them, and protobufjs skips them recursively, so nested groups could
 * exhaust the stack.
 */
function skip(reader: protobuf.Reader, wireType: number): void {
  if (wireType === 0) reader.uint64();
  else if (wireType === 1) reader.skip(8);
  else if (wireType === 2) reader.skip(reader.uint32());
  else if (wireType === 5) reader.skip(4);
  else throw new Malformed(`wire type ${wireType} is not used by Kubernetes messages`);
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === '' || v === 0 || v === false;
}

function readMessage(
  type: protobuf.Type,
  reader: protobuf.Reader,
  end: number,
  depth: number,
): unknown {
  if (depth > MAX_NESTING_DEPTH) throw new Malformed(`exceeded max depth of ${MAX_NESTING_DEPTH}`);
  const out: Obj = {};
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = type.fieldsById[tag >>> 3];
    if (!field) {
      skip(reader, tag & 7);
      continue;
    }
    field.resolve();
    const resolved = field.resolvedType instanceof protobuf.Type ? field.resolvedType : null;
    if (field instanceof protobuf.MapField) {
      const entryEnd = reader.uint32() + reader.pos;
      let key = '';
      let value: unknown;
      while (reader.pos < entryEnd) {
        const t = reader.uint32();
        if (t >>> 3 === 1) key = reader.string();
        else if (t >>> 3 === 2) value = readValue(field, field.type, resolved, reader, depth);
        else skip(reader, t & 7);
      }
      const map = (out[field.name] as Obj | undefined) ?? {};
      setOwn(map, key, value ?? (field.type === 'string' || field.type === 'bytes' ? '' : {}));
      out[field.name] = map;
    } else if (field.repeated) {
      const list = (out[field.name] as unknown[] | undefined) ?? [];
      if ((tag & 7) === 2 && !resolved && field.type !== 'string' && field.type !== 'bytes') {
        const packedEnd = reader.uint32() + reader.pos;
        while (reader.pos < packedEnd) list.push(readScalar(field, field.type, reader));
      } else {
        list.push(readValue(field, field.type, resolved, reader, depth));
      }
      out[field.name] = list;
    } else {
      const v = readValue(field, field.type, resolved, reader, depth);
      if (!isEmpty(v)) out[field.name] = v;
      else delete out[field.name];
    }
  }
  if (reader.pos !== end) throw new Malformed('a field runs past the end of its message');
  const s = special(type, out);
  return s ? s.value : out;
}

function decodeAs(type: protobuf.Type, bytes: Uint8Array): Obj {
  const reader = protobuf.Reader.create(bytes);
  return readMessage(type, reader, bytes.length, 0) as Obj;
}

/**
 * Decodes a protobuf object body into the JSON object it stands for (`apiVersion` and `kind`
 * from the envelope). Throws a 400 StatusError naming the problem, never quoting the body.
 */
export function decodeProtobufBody(raw: Buffer, expectedKind: string): Obj {
  if (raw.length < 4 || !raw.subarray(0, 4).equals(MAGIC)) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${expectedKind}): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]`,
    );
  }
  try {
    const envelope = decodeAs(
      types().lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'),
      raw.subarray(4),
    );
    const typeMeta = (envelope.typeMeta as Obj | undefined) ?? {};
    const apiVersion = String(typeMeta.apiVersion ?? '');
    const kind = String(typeMeta.kind ?? '');
    const r = RESOURCES.find((x) => apiVersionOf(x) === apiVersion && x.kind === kind);
    if (!r) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${expectedKind}): no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in the protobuf serializer`,
      );
    }
    const message = types().lookupType(`${protoPackage(r.group, r.version)}.${r.kind}`);
    const body = envelope.raw instanceof Uint8Array ? envelope.raw : new Uint8Array();
    return { apiVersion, kind, ...decodeAs(message, body) };
  } catch (err) {
    if (err instanceof StatusError) throw err;
    // protobufjs's reader throws RangeError/Error on truncated data and bad wire types; their
    // messages hold offsets only, but the answer names the kind of problem alone.
    throw badRequest(
      `the object provided is unrecognized (must be of type ${expectedKind}): malformed protobuf: ${err instanceof Malformed ? err.message : 'truncated or invalid wire data'}`,
    );
  }
}

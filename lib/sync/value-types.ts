/**
 * The types the API server's schema gives the fields patches write, per synced kind: a value of
 * another type fails its patch before anything is written, naming the field and the type it
 * needs, never the value (vcluster fails the sync too; without the check a number for a label
 * was dropped while the report said applied, and a string for a port was planned as a write the
 * API server refuses).
 */
import { formatLocation, type Location, type ValueTypeProblem } from '../patches/index.ts';

/** A JSON type a schema field takes. */
type FieldType = 'string' | 'integer' | 'boolean';

/** One rule: a location pattern (`*`: any key or index) and the type of the value there. */
type Rule = readonly [readonly string[], FieldType];

/** Labels and annotations: maps of strings, on every kind. */
const METADATA: readonly Rule[] = [
  [['metadata', 'labels', '*'], 'string'],
  [['metadata', 'annotations', '*'], 'string'],
];

const PORT: readonly Rule[] = [
  [['port'], 'integer'],
  [['name'], 'string'],
  [['protocol'], 'string'],
  [['appProtocol'], 'string'],
];

const ADDRESS: readonly Rule[] = [
  [['ip'], 'string'],
  [['hostname'], 'string'],
  [['nodeName'], 'string'],
];

function under(prefix: readonly string[], rules: readonly Rule[]): Rule[] {
  return rules.map(([pattern, type]) => [[...prefix, ...pattern], type] as const);
}

/** The rules of each synced kind (the fields of core/v1 and discovery/v1 that hold scalars). */
const RULES: Readonly<Record<string, readonly Rule[]>> = {
  Endpoints: [
    ...METADATA,
    ...under(['subsets', '*', 'ports', '*'], PORT),
    ...under(['subsets', '*', 'addresses', '*'], ADDRESS),
    ...under(['subsets', '*', 'notReadyAddresses', '*'], ADDRESS),
  ],
  EndpointSlice: [
    ...METADATA,
    [['addressType'], 'string'],
    ...under(['ports', '*'], PORT),
    [['endpoints', '*', 'addresses', '*'], 'string'],
    [['endpoints', '*', 'hostname'], 'string'],
    [['endpoints', '*', 'nodeName'], 'string'],
    [['endpoints', '*', 'zone'], 'string'],
    [['endpoints', '*', 'conditions', 'ready'], 'boolean'],
    [['endpoints', '*', 'conditions', 'serving'], 'boolean'],
    [['endpoints', '*', 'conditions', 'terminating'], 'boolean'],
  ],
  Secret: [
    ...METADATA,
    [['type'], 'string'],
    [['data', '*'], 'string'],
    [['stringData', '*'], 'string'],
  ],
  ConfigMap: [...METADATA, [['data', '*'], 'string'], [['binaryData', '*'], 'string']],
};

function matches(pattern: readonly string[], location: Location): boolean {
  return (
    pattern.length === location.length &&
    pattern.every((step, i) => step === '*' || step === String(location[i]))
  );
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

function fits(type: FieldType, value: unknown): boolean {
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return typeof value === type;
}

/** Deeper than any field of the synced kinds: a bound on the walk of a result. */
const MAX_DEPTH = 8;

/**
 * The first field at or under `location` where `value` (written there) does not have the type the
 * schema of `kind` gives it, or `undefined` when every field fits (or the kind has no rules).
 * `null` counts as removing the field, as the pipeline treats it.
 */
export function valueTypeProblem(
  kind: string,
  location: Location,
  value: unknown,
): ValueTypeProblem | undefined {
  const rules = RULES[kind];
  if (rules === undefined) return undefined;
  const walk = (at: Location, v: unknown, depth: number): ValueTypeProblem | undefined => {
    if (v === null || v === undefined) return undefined;
    const rule = rules.find(([pattern]) => matches(pattern, at));
    if (rule !== undefined) {
      return fits(rule[1], v)
        ? undefined
        : { path: formatLocation(at), expected: rule[1], got: typeOf(v) };
    }
    if (depth >= MAX_DEPTH || typeof v !== 'object') return undefined;
    const entries: [string | number, unknown][] = Array.isArray(v)
      ? v.map((x, i) => [i, x])
      : Object.entries(v as Record<string, unknown>);
    for (const [k, child] of entries) {
      const found = walk([...at, k], child, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(location, value, 0);
}

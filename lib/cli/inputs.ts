/**
 * Inputs shared by the commands that work on files (`render`, `plan`): the configuration with its
 * diagnostics, Kubernetes objects from YAML/JSON files, and the virtual-cluster identity flags.
 */
import { parseAllDocuments } from 'yaml';
import { formatDiagnostic, hasErrors } from '../config/diagnostic.ts';
import { unreadableFile } from '../config/load-config-file.ts';
import { parseConfig } from '../config/parse-config.ts';
import type { SyncConfig } from '../config/types.ts';
import type { KubeObject } from '../model/index.ts';
import { DEFAULT_MARKER_DOMAIN } from '../naming/index.ts';
import type { VirtualClusterIdentity } from '../sync/types.ts';
import { type CommandIO, type CommandValues, UsageError } from './command.ts';

/** The identity flags every file command takes, for `parseArgs`. */
export const IDENTITY_OPTIONS = {
  name: { type: 'string' },
  namespace: { type: 'string' },
  'marker-domain': { type: 'string' },
} as const;

/** Help text of {@link IDENTITY_OPTIONS}. */
export const IDENTITY_USAGE = `      --name VC_NAME       virtual cluster name (default: virtualcluster)
      --namespace HOST_NS  host namespace of the virtual cluster (default: virtualcluster)
      --marker-domain D    domain of the marker labels/annotations (default: ${DEFAULT_MARKER_DOMAIN})`;

/** A string flag's value, its fallback, or a usage error naming the flag. */
export function stringFlag(values: CommandValues, name: string, fallback?: string): string {
  const value = values[name];
  if (typeof value === 'string' && value !== '') return value;
  if (fallback !== undefined) return fallback;
  throw new UsageError(`missing --${name}; see --help`);
}

/** The virtual-cluster identity from `--name`, `--namespace`, `--marker-domain`. */
export function identityFrom(values: CommandValues): VirtualClusterIdentity {
  return {
    name: stringFlag(values, 'name', 'virtualcluster'),
    hostNamespace: stringFlag(values, 'namespace', 'virtualcluster'),
    markerDomain: stringFlag(values, 'marker-domain', DEFAULT_MARKER_DOMAIN),
  };
}

/**
 * Loads and validates the configuration named by `--config`, printing every diagnostic to stderr.
 * Resolves to `undefined` when it has an error (the caller exits 1).
 */
export async function loadConfigFlag(
  values: CommandValues,
  io: CommandIO,
): Promise<SyncConfig | undefined> {
  const file = stringFlag(values, 'config');
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (err) {
    io.stderr.write(`${formatDiagnostic(unreadableFile(file, err))}\n`);
    return undefined;
  }
  const { config, diagnostics } = parseConfig(text, file);
  for (const d of diagnostics) io.stderr.write(`${formatDiagnostic(d)}\n`);
  return config === undefined || hasErrors(diagnostics) ? undefined : config;
}

function isObject(value: unknown): value is KubeObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as KubeObject).metadata === 'object' &&
    (value as KubeObject).metadata !== null
  );
}

/** Every object in a YAML/JSON file: its documents, and the items of `List` documents. */
export async function readObjects(
  io: CommandIO,
  file: string,
  flag: string,
): Promise<KubeObject[]> {
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (err) {
    throw new UsageError(`cannot read ${flag} ${file}: ${(err as Error).message}`);
  }
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if ('errors' in doc && doc.errors.length > 0) {
      throw new UsageError(`${file}: not valid YAML: ${doc.errors[0]?.message ?? 'parse error'}`);
    }
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    const items =
      isObject(value) && Array.isArray(value['items']) ? (value['items'] as unknown[]) : [value];
    for (const item of items) {
      if (!isObject(item)) {
        throw new UsageError(`${file}: every document must be a Kubernetes object with metadata`);
      }
      out.push(item);
    }
  }
  return out;
}

/** The one object a flag names: the first of its file, or a usage error. */
export async function readObject(io: CommandIO, file: string, flag: string): Promise<KubeObject> {
  const [first] = await readObjects(io, file, flag);
  if (!first) throw new UsageError(`${flag} ${file} holds no Kubernetes object`);
  return first;
}

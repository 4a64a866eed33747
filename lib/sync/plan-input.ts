/**
 * The input of the planner and its validation: the planner is fed from the network (the
 * forwarder's events), so every field is checked before use and bad input becomes a failed
 * plan, never an exception.
 */
import type { OwnedResource, SyncConfig } from '../config/types.ts';
import { OWNED_RESOURCES } from '../config/types.ts';
import { isPlainObject, type KubeObject } from '../model/index.ts';
import { DNS_LABEL } from '../naming/index.ts';
import type { Evaluator } from '../patches/types.ts';
import { MIN_MARKER_KEY_LENGTH } from './import-signature.ts';
import type { ObjectKey, ResourcePlural, VirtualClusterIdentity } from './types.ts';

/** Everything one plan looks at. Pure data: the planner reads nothing else. */
export interface PlanInput {
  identity: VirtualClusterIdentity;
  config: SyncConfig;
  /** Resource plural of the object: `endpoints` (any owned namespaced kind works). */
  resource: ResourcePlural;
  /** The virtual key the plan is for. */
  key: ObjectKey;
  /** The virtual object; `null` when it does not exist (deleted). */
  virtualObject: KubeObject | null;
  /**
   * The virtual objects the kind's rules read (its companions, e.g. the Service of an
   * Endpoints or of an EndpointSlice), by resource plural; `null` for a missing one.
   */
  companions?: Record<string, KubeObject | null>;
  /** Older callers' form of `companions: { services }` (used when `companions` is absent). */
  service?: KubeObject | null;
  /** The current host copy at the key's host name; `null` when there is none. */
  hostObject: KubeObject | null;
  /** The objects reference patches name, as each side holds them (absent: none known). */
  references?: { virtual: KubeObject[]; host: KubeObject[] };
}

/** A DNS-1123 subdomain: what the names of the synced kinds are. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * True for a name Kubernetes accepts for a namespace. The key comes from the network: a name no
 * cluster can hold (`__proto__`, `toString`, `../x`) is refused before any lookup uses it.
 */
export function isNamespaceName(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** True for a name Kubernetes accepts for an Endpoints, Service, Secret or ConfigMap. */
export function isObjectName(name: string): boolean {
  return name.length <= 253 && DNS_SUBDOMAIN.test(name);
}

/** What the planner needs besides its input. */
export interface PlanEnv {
  evaluator: Evaluator;
}

/** The planner's input does not have the shape of {@link PlanInput}. */
export class InvalidPlanInputError extends Error {
  override name = 'InvalidPlanInputError';
  /** The input field at fault, e.g. `identity.name`. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(`invalid plan input at ${field}: ${message}`);
    this.field = field;
  }
}

function isMarkerKey(value: unknown): value is string {
  return typeof value === 'string' && value.length >= MIN_MARKER_KEY_LENGTH;
}

function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new InvalidPlanInputError(field, 'expected a non-empty string');
  }
  return value;
}

function checkObject(value: unknown, field: string, nullable: boolean): void {
  if (value === null && nullable) return;
  if (!isPlainObject(value) || !isPlainObject(value['metadata'])) {
    throw new InvalidPlanInputError(
      field,
      `expected an object with metadata${nullable ? ' or null' : ''}`,
    );
  }
  const meta = value['metadata'];
  for (const map of ['labels', 'annotations']) {
    if (meta[map] !== undefined && meta[map] !== null && !isPlainObject(meta[map])) {
      throw new InvalidPlanInputError(`${field}.metadata.${map}`, 'expected a map of strings');
    }
  }
}

/** The `sync.toHost` section key of a resource plural (`configmaps` -> `configMaps`). */
export function sectionOf(resource: string): OwnedResource | undefined {
  return OWNED_RESOURCES.find((r) => r.toLowerCase() === resource);
}

/**
 * Checks `input` deeply enough that the planner can trust every field it reads; throws
 * {@link InvalidPlanInputError} naming the first field at fault.
 */
export function validatePlanInput(input: unknown): asserts input is PlanInput {
  if (!isPlainObject(input)) throw new InvalidPlanInputError('input', 'expected an object');
  checkIdentity(input['identity']);
  checkConfig(input['config']);
  const resource = requireString(input['resource'], 'resource');
  if (sectionOf(resource) === undefined) {
    throw new InvalidPlanInputError(
      'resource',
      `"${resource}" is not a synced resource (${OWNED_RESOURCES.join(', ')})`,
    );
  }
  checkKey(input['key']);
  checkObjects(input);
}

/** The virtual cluster's identity; its marker keys are secrets, so problems never quote them. */
function checkIdentity(identity: unknown): void {
  if (!isPlainObject(identity)) throw new InvalidPlanInputError('identity', 'expected an object');
  requireString(identity['name'], 'identity.name');
  requireString(identity['hostNamespace'], 'identity.hostNamespace');
  requireString(identity['markerDomain'], 'identity.markerDomain');
  const markerKey = identity['markerKey'];
  if (markerKey !== undefined && !isMarkerKey(markerKey)) {
    throw new InvalidPlanInputError(
      'identity.markerKey',
      `expected a secret string of at least ${MIN_MARKER_KEY_LENGTH} characters`,
    );
  }
  const ownerUid = identity['ownerUid'];
  if (ownerUid !== undefined && (typeof ownerUid !== 'string' || ownerUid === '')) {
    throw new InvalidPlanInputError('identity.ownerUid', 'expected a non-empty string');
  }
  const ownerUnknown = identity['ownerUnknown'];
  if (ownerUnknown !== undefined && (ownerUnknown !== true || ownerUid !== undefined)) {
    throw new InvalidPlanInputError(
      'identity.ownerUnknown',
      'expected true, and only without identity.ownerUid',
    );
  }
  const previous = identity['previousMarkerKeys'];
  if (previous !== undefined && (!Array.isArray(previous) || !previous.every(isMarkerKey))) {
    throw new InvalidPlanInputError(
      'identity.previousMarkerKeys',
      `expected a list of secret strings of at least ${MIN_MARKER_KEY_LENGTH} characters`,
    );
  }
}

/** A loaded configuration: every owned section and the namespace mappings, in their shapes. */
function checkConfig(config: unknown): void {
  if (!isPlainObject(config))
    throw new InvalidPlanInputError('config', 'expected a loaded configuration');
  if (!isPlainObject(config['raw']))
    throw new InvalidPlanInputError('config.raw', 'expected an object');
  const resources = config['resources'];
  if (!isPlainObject(resources))
    throw new InvalidPlanInputError('config.resources', 'expected an object');
  for (const name of OWNED_RESOURCES) {
    const section = resources[name];
    if (
      !isPlainObject(section) ||
      typeof section['enabled'] !== 'boolean' ||
      !Array.isArray(section['patches'])
    ) {
      throw new InvalidPlanInputError(`config.resources.${name}`, 'expected {enabled, patches}');
    }
    const hostNames = section['hostNames'];
    if (hostNames !== undefined && hostNames !== 'short' && hostNames !== 'long') {
      throw new InvalidPlanInputError(
        `config.resources.${name}.hostNames`,
        'expected short or long',
      );
    }
    section['patches'].forEach((patch, i) => {
      if (!isPlainObject(patch) || typeof patch['path'] !== 'string') {
        throw new InvalidPlanInputError(
          `config.resources.${name}.patches[${i}]`,
          'expected a patch',
        );
      }
    });
  }
  const namespaces = config['namespaces'];
  if (
    !isPlainObject(namespaces) ||
    typeof namespaces['enabled'] !== 'boolean' ||
    !isPlainObject(namespaces['mappings'])
  ) {
    throw new InvalidPlanInputError('config.namespaces', 'expected {enabled, mappings}');
  }
  for (const [from, to] of Object.entries(namespaces['mappings'])) {
    if (typeof to !== 'string' || to === '') {
      throw new InvalidPlanInputError(
        `config.namespaces.mappings.${from}`,
        'expected a namespace name',
      );
    }
  }
}

/** The object key: a namespace and a name a Kubernetes cluster could hold. */
function checkKey(key: unknown): void {
  if (!isPlainObject(key)) throw new InvalidPlanInputError('key', 'expected {namespace, name}');
  const namespace = requireString(key['namespace'], 'key.namespace');
  if (!isNamespaceName(namespace)) {
    throw new InvalidPlanInputError(
      'key.namespace',
      'not a Kubernetes namespace name (a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit)',
    );
  }
  const name = requireString(key['name'], 'key.name');
  if (!isObjectName(name)) {
    throw new InvalidPlanInputError(
      'key.name',
      'not a Kubernetes object name (a DNS-1123 subdomain: at most 253 lower-case letters, digits, "-" and ".")',
    );
  }
}

/** The objects of the input: the virtual and host objects, companions and referenced objects. */
function checkObjects(input: Record<string, unknown>): void {
  checkObject(input['virtualObject'], 'virtualObject', true);
  if (input['service'] !== undefined) checkObject(input['service'], 'service', true);
  const companions = input['companions'];
  if (companions !== undefined) {
    if (!isPlainObject(companions))
      throw new InvalidPlanInputError('companions', 'expected an object');
    for (const [resource, object] of Object.entries(companions)) {
      checkObject(object, `companions.${resource}`, true);
    }
  }
  checkObject(input['hostObject'], 'hostObject', true);
  const references = input['references'];
  if (references !== undefined) {
    if (
      !isPlainObject(references) ||
      !Array.isArray(references['virtual']) ||
      !Array.isArray(references['host'])
    ) {
      throw new InvalidPlanInputError('references', 'expected {virtual: [], host: []}');
    }
    for (const side of ['virtual', 'host'] as const) {
      const list = references[side] as unknown[];
      for (let i = 0; i < list.length; i++) checkObject(list[i], `references.${side}[${i}]`, false);
    }
  }
}

/**
 * Which kinds the sync knows by resource plural, and how each kind is named on the host.
 */
import { RESOURCES, type ResourceType } from '../kube/resources.ts';

/** The API row of a resource plural (`endpoints`, `secrets`, ...), if the project knows it. */
export function resourceByPlural(plural: string): ResourceType | undefined {
  return Object.values(RESOURCES).find((r) => r.plural === plural);
}

/** The API row of a kind (`Secret`, ...), if the project knows it. */
export function resourceByKind(kind: string): ResourceType | undefined {
  return Object.values(RESOURCES).find((r) => r.kind === kind);
}

/**
 * How a kind is named on the host in single-namespace mode. Secrets and ConfigMaps are synced
 * only as reference targets and get the short `v...` name (spec, reference patch rule 5);
 * Endpoints, Services and Pods get the long readable name, as their host copies carry it.
 * Every other kind a reference may name gets the short form.
 */
export type NameScheme = 'long' | 'short';

const LONG_NAMED_KINDS = new Set(['Endpoints', 'Service', 'Pod']);

/** The {@link NameScheme} of a kind. */
export function nameSchemeOf(kind: string): NameScheme {
  return LONG_NAMED_KINDS.has(kind) ? 'long' : 'short';
}

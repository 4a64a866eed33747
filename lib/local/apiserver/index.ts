/**
 * A faithful emulator of the parts of the Kubernetes API this project uses. See docs/emulator.md.
 */

export type { StatusCause, StatusDetails } from '../../kube/types.ts';
export { type ClusterOptions, type EmulatedCluster, startCluster } from './cluster.ts';
export { type FieldError, type StatusBody, StatusError } from './errors.ts';
export { FaultInjector, type FaultRule, type Verb } from './faults.ts';
export { buildKubeconfig } from './kubeconfig.ts';
export type { PatchType } from './patch.ts';
export { RESOURCES, type ResourceType } from './resources.ts';
export {
  ClusterStore,
  type DeleteOptions,
  type Preconditions,
  type StoredEvent,
  type WriteOptions,
} from './store.ts';

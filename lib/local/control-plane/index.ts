/** A real Kubernetes control plane on loopback. See docs/local.md. */
export {
  type ControlPlaneBinaries,
  ControlPlaneBinariesMissingError,
  findControlPlaneBinaries,
  kubeCacheDirectory,
  kubeVersion,
} from './binaries.ts';
export {
  type ControlPlane,
  type ControlPlaneOptions,
  type ControlPlaneProcess,
  ControlPlaneStartError,
  SYNC_CONTROLLERS,
  startControlPlane,
} from './control-plane.ts';
export { type FaultProxy, type FaultProxyOptions, startFaultProxy } from './fault-proxy.ts';

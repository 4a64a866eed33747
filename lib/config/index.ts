/**
 * The configuration module: loading, defaults and validation of the configuration file
 * (docs/configuration.md). Re-exports only.
 */
export { assertValid, ConfigError } from './config-error.ts';
export { DEFAULTS, mergeDefaults } from './defaults.ts';
export { type Diagnostic, formatDiagnostic, hasErrors, type Severity } from './diagnostic.ts';
export { loadConfigFile, unreadableFile } from './load-config-file.ts';
export { type ConfigResult, parseConfig } from './parse-config.ts';
export { finishedDiagnostics, type ReadYaml, readYaml } from './read-yaml.ts';
export { type Place, Reporter } from './reporter.ts';
export { OWNED_KINDS, resourceForKind } from './resource-kind.ts';
export type {
  NamespaceSyncConfig,
  OwnedResource,
  Patch,
  ReferenceSpec,
  ResourceSyncConfig,
  SourcePosition,
  SyncConfig,
} from './types.ts';
export { OWNED_RESOURCES } from './types.ts';

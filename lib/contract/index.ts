/**
 * The event/result contract between the forwarder and the functions: types, schema validation,
 * and the helpers both sides share.
 */
export { ContractError, type ContractName, describeIssues } from './errors.ts';
export {
  EVENT_VERSION,
  EVENT_VERSIONS,
  type EventCompanion,
  type EventDirection,
  type EventItem,
  type EventItemV1,
  type EventVirtualCluster,
  MAX_EVENT_ITEMS,
  type SyncEvent,
  type SyncEventV1,
  type SyncEventV2,
  upgradeItem,
} from './event.ts';
export {
  type CompiledSchema,
  formatIssue,
  type SchemaFacts,
  type SchemaIssue,
  type SchemaValidator,
  schemaValidator,
} from './json-schema.ts';
export {
  failedItemResult,
  type HostWriteSummary,
  type ItemResult,
  type ItemStatus,
  RESULT_VERSION,
  type SyncResult,
  summarizeHostWrite,
} from './result.ts';
export {
  eventV1Validator,
  eventValidator,
  resultValidator,
  signedEventValidator,
  tenantValidator,
  testFileValidator,
} from './schemas.ts';
export {
  identityOf,
  matchResults,
  type ParsedEvent,
  type ParsedResult,
  parseEvent,
  parseResult,
  type RejectedItem,
  type ResultMatch,
} from './validate.ts';

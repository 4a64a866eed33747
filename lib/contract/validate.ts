/**
 * Validation at the boundary. An event whose envelope is malformed is rejected whole; a malformed
 * item fails alone so the other items of the batch are still processed. A result is accepted or
 * rejected whole (the forwarder cannot act on half a result).
 */
import { messagePath } from '../model/index.ts';
import { DEFAULT_MARKER_DOMAIN } from '../naming/marker-domain.ts';
import type { ObjectKey, VirtualClusterIdentity } from '../sync/types.ts';
import { ContractError, describeIssues } from './errors.ts';
import {
  EVENT_VERSION,
  EVENT_VERSIONS,
  type EventItem,
  type EventItemV1,
  type SyncEventV2,
  upgradeItem,
} from './event.ts';
import type { SchemaIssue } from './json-schema.ts';
import type { ItemResult, SyncResult } from './result.ts';
import { RESULT_VERSION } from './result.ts';
import { eventV1Validator, eventValidator, resultValidator } from './schemas.ts';

/** An event item that failed validation, with what is needed to report a result for it. */
export interface RejectedItem {
  /** Index in the event's `items`. */
  index: number;
  /** The item's id, or `items[<index>]` when it has none usable. */
  id: string;
  /** The item's key, or empty strings where it has none usable. */
  key: ObjectKey;
  /** Every issue, paths relative to the event (`items[3].key.name: must be a string`). */
  message: string;
  issues: SchemaIssue[];
}

/** Outcome of {@link parseEvent}. */
export type ParsedEvent =
  | {
      ok: true;
      /** The event with only its valid items, in their original order, in version-2 form. */
      event: SyncEventV2;
      /** The version the event arrived in (version 1 items were upgraded). */
      version: number;
      /** Index in the original `items` -> why that item was rejected. */
      itemErrors: Map<number, string>;
      /** The same rejections with id and key, to build `failed` results from. */
      rejectedItems: RejectedItem[];
    }
  | { ok: false; error: ContractError };

/** Outcome of {@link parseResult}. */
export type ParsedResult = { ok: true; result: SyncResult } | { ok: false; error: ContractError };

/**
 * Validates an event at the function's boundary. Returns `ok: false` when the event as a whole is
 * unusable (not an object, unsupported version, bad virtual cluster or config URI, no items, too
 * many items, duplicate ids); otherwise the valid items, and the invalid ones separately.
 */
export function parseEvent(input: unknown): ParsedEvent {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const got = Array.isArray(input) ? 'an array' : input === null ? 'null' : typeof input;
    return {
      ok: false,
      error: new ContractError(
        'event',
        [{ path: '', message: `must be a JSON object (got ${got})` }],
        'invoke the function with an endpoint-sync event (version 2, or 1; see docs/contracts.md)',
      ),
    };
  }
  const raw = input as Record<string, unknown>;
  const version = raw['version'];
  if (typeof version !== 'number' || !EVENT_VERSIONS.includes(version)) {
    return {
      ok: false,
      error: new ContractError(
        'event',
        [
          {
            path: 'version',
            message: `unsupported event version ${JSON.stringify(version)}; this function understands versions ${EVENT_VERSIONS.join(' and ')}`,
          },
        ],
        'deploy matching versions of the forwarder and the functions',
      ),
    };
  }

  const envelope: SchemaIssue[] = [];
  const byItem = new Map<number, SchemaIssue[]>();
  const validator = version === EVENT_VERSION ? eventValidator : eventV1Validator;
  for (const issue of validator.validate(input)) {
    const index = itemIndexOf(issue.path);
    if (index === undefined) envelope.push(issue);
    else byItem.set(index, [...(byItem.get(index) ?? []), issue]);
  }
  const items = raw['items'];
  if (Array.isArray(items)) envelope.push(...duplicateIds(items));
  if (envelope.length > 0) return { ok: false, error: new ContractError('event', envelope) };

  const list = items as unknown[];
  const itemErrors = new Map<number, string>();
  const rejectedItems: RejectedItem[] = [];
  const valid: EventItem[] = [];
  list.forEach((item, index) => {
    const issues = byItem.get(index);
    if (!issues) {
      valid.push(
        version === EVENT_VERSION ? (item as EventItem) : upgradeItem(item as EventItemV1),
      );
      return;
    }
    const message = describeIssues(issues);
    itemErrors.set(index, message);
    rejectedItems.push({ index, ...identify(item, index), message, issues });
  });
  return {
    ok: true,
    event: { ...(input as Omit<SyncEventV2, 'items'>), version: EVENT_VERSION, items: valid },
    version,
    itemErrors,
    rejectedItems,
  };
}

/** Validates a function's result as a whole. */
export function parseResult(input: unknown): ParsedResult {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const got = Array.isArray(input) ? 'an array' : input === null ? 'null' : typeof input;
    return {
      ok: false,
      error: new ContractError('result', [
        { path: '', message: `must be a JSON object (got ${got})` },
      ]),
    };
  }
  const version = (input as Record<string, unknown>)['version'];
  if (version !== RESULT_VERSION) {
    return {
      ok: false,
      error: new ContractError(
        'result',
        [
          {
            path: 'version',
            message: `unsupported result version ${JSON.stringify(version)}; this forwarder understands version ${RESULT_VERSION}`,
          },
        ],
        'deploy matching versions of the forwarder and the functions',
      ),
    };
  }
  const issues = resultValidator.validate(input);
  if (issues.length > 0) return { ok: false, error: new ContractError('result', issues) };
  return { ok: true, result: input as SyncResult };
}

/** How a result's items line up with the event's. */
export interface ResultMatch {
  /** Event item id -> its result. */
  byId: Map<string, ItemResult>;
  /** Event item ids without a result. */
  missing: string[];
  /** Result ids that name no event item. */
  unexpected: string[];
  /** Ids with more than one result. */
  duplicates: string[];
}

/** Pairs every event item with its result by id, listing whatever does not pair up. */
export function matchResults(
  event: { items: readonly { id: string }[] },
  result: SyncResult,
): ResultMatch {
  const expected = new Set(event.items.map((item) => item.id));
  const byId = new Map<string, ItemResult>();
  const unexpected: string[] = [];
  const duplicates = new Set<string>();
  for (const item of result.results) {
    if (!expected.has(item.id)) unexpected.push(item.id);
    else if (byId.has(item.id)) duplicates.add(item.id);
    else byId.set(item.id, item);
  }
  const missing = [...expected].filter((id) => !byId.has(id));
  return { byId, missing, unexpected, duplicates: [...duplicates] };
}

/** The identity the sync layer works with, from an event (marker domain defaulted). */
export function identityOf(
  event: Pick<SyncEventV2, 'virtualCluster'>,
  defaultMarkerDomain: string = DEFAULT_MARKER_DOMAIN,
): VirtualClusterIdentity {
  return {
    name: event.virtualCluster.name,
    hostNamespace: event.virtualCluster.namespace,
    markerDomain: event.virtualCluster.markerDomain ?? defaultMarkerDomain,
  };
}

/** `items[3]...` -> 3; anything else (the envelope, or `items` itself) -> undefined. */
function itemIndexOf(path: string): number | undefined {
  const match = /^items\[(\d+)\]/.exec(path);
  return match ? Number(match[1]) : undefined;
}

/** Results are matched by id, so two items with one id make the whole event ambiguous. */
function duplicateIds(items: unknown[]): SchemaIssue[] {
  const first = new Map<string, number>();
  const issues: SchemaIssue[] = [];
  items.forEach((item, index) => {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id !== 'string') return;
    const seen = first.get(id);
    if (seen === undefined) first.set(id, index);
    else {
      issues.push({
        path: messagePath(['items', index, 'id']),
        message: `duplicates items[${seen}].id ${JSON.stringify(id)}; ids must be unique within an event`,
      });
    }
  });
  return issues;
}

function identify(item: unknown, index: number): { id: string; key: ObjectKey } {
  const record = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  const id =
    typeof record['id'] === 'string' && record['id'] !== '' ? record['id'] : `items[${index}]`;
  const key = (
    typeof record['key'] === 'object' && record['key'] !== null ? record['key'] : {}
  ) as Record<string, unknown>;
  return {
    id,
    key: {
      namespace: typeof key['namespace'] === 'string' ? key['namespace'] : '',
      name: typeof key['name'] === 'string' ? key['name'] : '',
    },
  };
}

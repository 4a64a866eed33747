/**
 * Errors of the contract boundary.
 */
import { formatIssue, type SchemaIssue } from './json-schema.ts';

/** Which side of the boundary a payload belongs to. */
export type ContractName = 'event' | 'result';

/** Most issues a message lists before it says how many more there are. */
const LISTED_ISSUES = 10;

/**
 * A payload does not satisfy its contract as a whole (not an object, wrong version, bad envelope).
 * Never retryable: the same payload fails the same way; the sender and receiver disagree about the
 * contract, usually because they run different versions.
 */
export class ContractError extends Error {
  override name = 'ContractError';
  readonly contract: ContractName;
  readonly issues: SchemaIssue[];
  readonly retryable = false;
  constructor(contract: ContractName, issues: SchemaIssue[], hint?: string) {
    super(
      `invalid ${contract}: ${describeIssues(issues)}` +
        (hint
          ? `; ${hint}`
          : `; check that the forwarder and the functions run compatible versions`),
    );
    this.contract = contract;
    this.issues = issues;
  }
}

/** `a: must be x; b: is required (and 3 more)`. */
export function describeIssues(issues: readonly SchemaIssue[]): string {
  const listed = issues.slice(0, LISTED_ISSUES).map(formatIssue).join('; ');
  const more = issues.length - LISTED_ISSUES;
  return more > 0 ? `${listed} (and ${more} more)` : listed;
}

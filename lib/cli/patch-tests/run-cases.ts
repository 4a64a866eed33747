/**
 * Running the cases of one test file: each case is rendered by render's own evaluation path
 * (`openRenderer`, the function's sandbox and limits), and what comes out is compared with what
 * the case expects. Plain data in and out, so the report, JUnit and `--update` read the same
 * outcome.
 */
import { stringify } from 'yaml';
import type { SyncConfig } from '../../config/index.ts';
import {
  cloneJson,
  isPlainObject,
  jsonEqual,
  type KubeObject,
  type PlanStatus,
  type VirtualClusterIdentity,
} from '../../model/index.ts';
import { UsageError } from '../command.ts';
import { formatReports, type Renderer } from '../commands/render.ts';
import { lineDiff } from './line-diff.ts';
import type { CaseExpectations, TestCase } from './test-file.ts';

/** What came out of rendering a case, in the terms of its expectations. */
export interface ActualResult {
  object?: KubeObject;
  status: PlanStatus;
  reasonCode: string;
  patches: string[];
  failures: string[];
}

/** One expectation that did not hold. */
export interface Mismatch {
  field: keyof CaseExpectations;
  /** Expected against actual, line by line (`- ` expected, `+ ` actual). */
  diff: string[];
}

/** The outcome of one case. */
export interface CaseOutcome {
  index: number;
  name: string;
  line: number;
  /** What came out; absent when the case could not be rendered (see `error`). */
  actual?: ActualResult;
  mismatches: Mismatch[];
  /** Why the case could not be rendered or has nothing to check. */
  error?: string;
  durationMs: number;
}

/** True when the case holds. */
export function passed(outcome: CaseOutcome): boolean {
  return outcome.error === undefined && outcome.mismatches.length === 0;
}

/**
 * Renders and checks one case. Awaits the renderer, so that an evaluation moved off this thread
 * (a watchdog's worker) needs no change here.
 */
export async function runCase(
  renderer: Renderer,
  config: SyncConfig,
  identity: VirtualClusterIdentity,
  testCase: TestCase,
  index: number,
  line: number,
): Promise<CaseOutcome> {
  const started = performance.now();
  const outcome = (rest: Partial<CaseOutcome>): CaseOutcome => ({
    index,
    name: testCase.name,
    line,
    mismatches: [],
    ...rest,
    durationMs: performance.now() - started,
  });
  // The renderer fills in defaults on the objects it is given; the file's data stays as written.
  const input = cloneJson(testCase);
  let actual: ActualResult;
  try {
    const rendered = await renderer.render({
      config,
      identity,
      direction: input.direction ?? 'toHost',
      object: input.object,
      service: input.service ?? null,
      hostObject: input.hostObject ?? null,
      virtualObject: input.virtualObject ?? null,
      ...(input.references
        ? {
            references: {
              virtual: input.references.virtual ?? [],
              host: input.references.host ?? [],
            },
          }
        : {}),
    });
    actual = {
      ...(rendered.object ? { object: rendered.object } : {}),
      status: rendered.status,
      reasonCode: rendered.reasonCode,
      patches: patchLines(formatReports(rendered.reports)),
      failures: rendered.failures,
    };
  } catch (err) {
    // What render itself refuses (a kind it does not handle, a disabled section): its message.
    if (err instanceof UsageError) return outcome({ error: `cannot be rendered: ${err.message}` });
    throw err;
  }
  const expect = testCase.expect ?? {};
  if (Object.keys(expect).length === 0) {
    return outcome({
      actual,
      error: 'expects nothing; write its "expect:" or run with --update to record what comes out',
    });
  }
  return outcome({ actual, mismatches: mismatchesOf(expect, actual) });
}

/** The explain lines of `render --explain`, without the per-run headers. */
function patchLines(report: string): string[] {
  return report
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('# patches'));
}

/** Every expectation given in `expect` that `actual` does not meet. */
export function mismatchesOf(expect: CaseExpectations, actual: ActualResult): Mismatch[] {
  const out: Mismatch[] = [];
  const check = (field: keyof CaseExpectations, expected: unknown, got: unknown, ok: boolean) => {
    if (!ok) out.push({ field, diff: lineDiff(show(expected), show(got)) });
  };
  if (expect.object !== undefined) {
    const got = actual.object === undefined ? undefined : plain(actual.object);
    check('object', expect.object, got, jsonEqual(plain(expect.object), got));
  }
  if (expect.objectContains !== undefined) {
    const got = actual.object === undefined ? undefined : plain(actual.object);
    const ok = got !== undefined && contains(got, plain(expect.objectContains));
    check('objectContains', expect.objectContains, projected(got, expect.objectContains), ok);
  }
  if (expect.status !== undefined) {
    check('status', expect.status, actual.status, expect.status === actual.status);
  }
  if (expect.reasonCode !== undefined) {
    check(
      'reasonCode',
      expect.reasonCode,
      actual.reasonCode,
      expect.reasonCode === actual.reasonCode,
    );
  }
  if (expect.patches !== undefined) {
    check('patches', expect.patches, actual.patches, jsonEqual(expect.patches, actual.patches));
  }
  if (expect.failures !== undefined) {
    check(
      'failures',
      expect.failures,
      actual.failures,
      jsonEqual(expect.failures, actual.failures),
    );
  }
  return out;
}

/** The value as JSON has it (`undefined` members dropped): what a host copy is made of. */
function plain(value: unknown): unknown {
  return value === undefined ? undefined : cloneJson(value);
}

/** YAML for a diff; `(nothing)` when the value is absent. */
function show(value: unknown): string {
  return value === undefined ? '(nothing)\n' : stringify(value, { lineWidth: 0 });
}

/**
 * True when every field of `subset` is in `value` with the same value: mappings may hold more
 * keys, lists must have the same length with each item a subset of its counterpart.
 */
export function contains(value: unknown, subset: unknown): boolean {
  if (Array.isArray(subset)) {
    return (
      Array.isArray(value) &&
      value.length === subset.length &&
      subset.every((item, i) => contains(value[i], item))
    );
  }
  if (isPlainObject(subset)) {
    return (
      isPlainObject(value) &&
      Object.keys(subset).every((k) => Object.hasOwn(value, k) && contains(value[k], subset[k]))
    );
  }
  return jsonEqual(value, subset);
}

/**
 * `value` cut down to the fields `shape` names, so that a subset's diff shows only what the case
 * looks at (and `--update` keeps a subset a subset). Lists keep every item of `value`.
 */
export function projected(value: unknown, shape: unknown): unknown {
  if (isPlainObject(shape) && isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(shape)) {
      if (Object.hasOwn(value, key)) out[key] = projected(value[key], shape[key]);
    }
    return out;
  }
  if (Array.isArray(shape) && Array.isArray(value)) {
    return value.map((item, i) => (i < shape.length ? projected(item, shape[i]) : item));
  }
  return value;
}

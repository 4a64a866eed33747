/**
 * `endpoint-sync test --update`: what came out is written into the expectations of the cases
 * that failed, through the YAML library's document API, and only the text of those cases is
 * replaced: the rest of the file (other cases, comments, spacing, quoting) stays byte for byte.
 */
import { type Document, isCollection, isNode, isSeq, type Node, parseDocument } from 'yaml';
import { type CaseOutcome, passed, projected } from './run-cases.ts';
import type { TestCase } from './test-file.ts';

/**
 * Writes the actual results of the failed cases of `outcomes` into `doc` (parsed from `text`);
 * returns the new text, or `undefined` when no case needed it. A case that expected something
 * gets the fields it expected that did not hold (in the style they were written: a flow mapping
 * stays one); a case that expected nothing gets the object, the status and the reason code (and
 * the failures when it failed).
 */
export function updatedText(
  text: string,
  doc: Document.Parsed,
  cases: readonly TestCase[],
  outcomes: readonly CaseOutcome[],
): string | undefined {
  const changed = new Set<number>();
  for (const outcome of outcomes) {
    const actual = outcome.actual;
    if (passed(outcome) || actual === undefined) continue;
    const expected = cases[outcome.index]?.expect ?? {};
    const at = ['cases', outcome.index, 'expect'];
    changed.add(outcome.index);
    if (Object.keys(expected).length === 0) {
      const recorded = {
        ...(actual.object ? { object: actual.object } : {}),
        status: actual.status,
        reasonCode: actual.reasonCode,
        ...(actual.failures.length > 0 ? { failures: actual.failures } : {}),
      };
      doc.setIn(at, doc.createNode(recorded));
      continue;
    }
    for (const { field } of outcome.mismatches) {
      const value =
        field === 'object'
          ? actual.object
          : field === 'objectContains'
            ? projected(actual.object, expected.objectContains)
            : actual[field];
      if (value === undefined) {
        doc.deleteIn([...at, field]);
        continue;
      }
      const old = doc.getIn([...at, field], true);
      const node = doc.createNode(value);
      if (isCollection(old) && old.flow && isCollection(node)) node.flow = true;
      doc.setIn([...at, field], node);
    }
  }
  if (changed.size === 0) return undefined;
  return spliceCases(text, doc, changed);
}

/** `text` with the items of `changed` replaced by their text in `doc` as it is now. */
function spliceCases(text: string, doc: Document.Parsed, changed: ReadonlySet<number>): string {
  const before = caseItems(doc);
  // The ranges of the items as written are read before the document is printed again.
  const spans = [...changed].map((i) => ({ i, range: before[i]?.range })).sort((a, b) => b.i - a.i);
  const printed = doc.toString({ lineWidth: 0 });
  const after = caseItems(parseDocument(printed, { uniqueKeys: false, logLevel: 'error' }));
  let out = text;
  for (const { i, range } of spans) {
    const now = after[i]?.range;
    // A case the library cannot place (an alias, a flow list of cases): the whole file is
    // printed by the library instead, which still keeps comments.
    if (!range || !now) return printed;
    out = out.slice(0, range[0]) + printed.slice(now[0], now[2]) + out.slice(range[2]);
  }
  return out;
}

/** The item nodes of the document's `cases` list (empty when it is not a block list). */
function caseItems(doc: Document): (Node | undefined)[] {
  const cases = doc.get('cases', true);
  if (!isSeq(cases) || cases.flow) return [];
  return cases.items.map((item) => (isNode(item) ? item : undefined));
}

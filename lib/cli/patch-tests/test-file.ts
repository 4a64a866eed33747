/**
 * Reading one `endpoint-sync test` file: YAML read by the configuration's own reader (limits,
 * syntax errors, duplicate keys, aliases), checked against `schema/test.schema.json` (ajv), and
 * every finding a `file:line:col` diagnostic at the node it is about. The parsed document is kept
 * so that `--update` can write results into it without losing the rest of the file.
 */
import {
  type Alias,
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
} from 'yaml';
import {
  type Diagnostic,
  finishedDiagnostics,
  hasErrors,
  Reporter,
  readYaml,
} from '../../config/index.ts';
import { testFileValidator } from '../../contract/index.ts';
import { childPath, indexPath, type KubeObject, type PlanStatus } from '../../model/index.ts';
import type { Direction } from '../../patches/index.ts';

/** What a case expects; every field given is checked. */
export interface CaseExpectations {
  object?: KubeObject;
  objectContains?: Record<string, unknown>;
  status?: PlanStatus;
  reasonCode?: string;
  patches?: string[];
  failures?: string[];
}

/** One case of a test file, as written. */
export interface TestCase {
  name: string;
  direction?: Direction;
  object: KubeObject;
  service?: KubeObject;
  hostObject?: KubeObject;
  virtualObject?: KubeObject;
  references?: { virtual?: KubeObject[]; host?: KubeObject[] };
  expect?: CaseExpectations;
}

/** A test file's contents (`schema/test.schema.json`). */
export interface TestFileContents {
  config: string;
  virtualCluster?: { name?: string; namespace?: string; markerDomain?: string };
  cases: TestCase[];
}

/** A test file that was read: its contents when valid, its diagnostics, and where things are. */
export interface TestFile {
  file: string;
  contents?: TestFileContents;
  diagnostics: Diagnostic[];
  /** The parsed document (for `--update`). */
  doc?: Document.Parsed;
  /** The 1-based line of each case, by index. */
  caseLines: number[];
  /** The 1-based line and column of the `config` value. */
  configAt: { line: number; column: number };
}

/**
 * Reads test file `text` (named `file` in diagnostics). Never throws: every problem is a
 * diagnostic; `contents` is present only when there is no error.
 */
export function readTestFile(text: string, file: string): TestFile {
  const lineCounter = new LineCounter();
  const reporter = new Reporter(file, lineCounter);
  const result: TestFile = {
    file,
    diagnostics: [],
    caseLines: [],
    configAt: { line: 1, column: 1 },
  };
  const read = readYaml(text, lineCounter, reporter);
  // The reader's limits are the configuration's, and so are its words for the file.
  for (const d of reporter.diagnostics) {
    d.message = d.message.replace(/^the configuration\b/, 'the test file');
  }
  if (read === undefined) return { ...result, diagnostics: finishedDiagnostics(reporter) };
  const { doc, facts } = read;
  const nodes = nodesByPath(doc.contents, (alias) => facts.aliases.get(alias));
  let data: unknown;
  try {
    // Aliases were counted and their expansion bounded by the reader's tree walk.
    data = doc.toJS({ maxAliasCount: -1 });
  } catch (err) {
    reporter.error(
      0,
      '',
      `the test file could not be turned into data (${err instanceof Error ? err.name : 'unknown error'}); simplify its keys and tags`,
    );
    return { ...result, diagnostics: finishedDiagnostics(reporter) };
  }
  for (const issue of testFileValidator.validate(data)) {
    reporter.error(
      nearestNode(nodes, issue.path),
      issue.path,
      `${issue.message}${hint(issue.path)}`,
    );
  }
  const at = (path: string) => reporter.position(nodes.get(path)?.range?.[0] ?? 0);
  if (!hasErrors(reporter.diagnostics)) {
    const contents = data as TestFileContents;
    const seen = new Set<string>();
    contents.cases.forEach((testCase, i) => {
      const path = childPath(indexPath('cases', i), 'name');
      if (seen.has(testCase.name)) {
        reporter.error(nodes.get(path), path, 'two cases have this name; give each case its own');
      }
      seen.add(testCase.name);
    });
    result.contents = contents;
    result.caseLines = contents.cases.map((_, i) => at(indexPath('cases', i)).line);
    result.configAt = at('config');
  }
  const diagnostics = finishedDiagnostics(reporter);
  if (hasErrors(diagnostics)) return { ...result, contents: undefined, diagnostics } as TestFile;
  return { ...result, diagnostics, doc };
}

/** What to do about a mistake at `path`, when the schema's message alone does not say it. */
function hint(path: string): string {
  if (path === '') return '; a test file has "config:" and "cases:" (see docs/testing.md)';
  return '';
}

/**
 * Where each node of the tree is, by its message path (`cases[2].expect.object`): a mapping's
 * field at its key, a list's item at the item. Aliases are followed.
 */
function nodesByPath(root: unknown, target: (alias: Alias) => Node | undefined): Map<string, Node> {
  const out = new Map<string, Node>();
  const stack: { node: unknown; place?: Node; path: string; depth: number }[] = [
    { node: root, path: '', depth: 0 },
  ];
  while (stack.length > 0) {
    const { node, place, path, depth } = stack.pop()!;
    // An alias is reported where it is written; its target's children under this path too.
    const resolved = isAlias(node) ? target(node) : node;
    if (!resolved || out.has(path) || depth > 64) continue;
    out.set(path, place ?? (node as Node));
    if (isMap(resolved)) {
      for (const pair of resolved.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
        if (key === undefined) continue;
        // A field is reported at its key: the line a person looks for, and where an unknown
        // field's name is.
        stack.push({
          node: pair.value,
          place: pair.key as Node,
          path: childPath(path, key),
          depth: depth + 1,
        });
      }
    } else if (isSeq(resolved)) {
      for (const [i, item] of resolved.items.entries()) {
        stack.push({ node: item, path: indexPath(path, i), depth: depth + 1 });
      }
    }
  }
  return out;
}

/**
 * The node of `path`, or of its nearest ancestor in the file (a missing field is reported on
 * the mapping that should hold it).
 */
function nearestNode(nodes: ReadonlyMap<string, Node>, path: string): Node | undefined {
  for (let p = path; ; ) {
    const node = nodes.get(p);
    if (node || p === '') return node;
    const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
    p = cut <= 0 ? '' : p.slice(0, cut);
  }
}

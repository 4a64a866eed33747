/**
 * What `endpoint-sync test` prints: one line per case, and for each failing case where it is
 * (`file:line`) and, per expectation that did not hold, expected against actual line by line;
 * and the same outcomes as JUnit XML for CI systems.
 */
import { type CaseOutcome, passed } from './run-cases.ts';

/** The outcome of one test file: its cases, or why none ran. */
export interface FileOutcome {
  file: string;
  /** Set when the file (or its configuration) is invalid: nothing ran. */
  invalid?: boolean;
  cases: CaseOutcome[];
  durationMs: number;
}

/** The human report of one file's cases (diagnostics of an invalid file are printed apart). */
export function formatFileOutcome(outcome: FileOutcome): string {
  const lines: string[] = [];
  for (const c of outcome.cases) {
    if (passed(c)) {
      lines.push(`  PASS ${c.name}`);
      continue;
    }
    lines.push(`  FAIL ${c.name} (${outcome.file}:${c.line})`);
    if (c.error !== undefined) lines.push(`      ${c.error}`);
    for (const m of c.mismatches) {
      lines.push(`      ${m.field}: expected (-) against actual (+)`);
      for (const d of m.diff) lines.push(`        ${d}`);
    }
  }
  return `${outcome.file}\n${lines.join('\n')}${lines.length > 0 ? '\n' : ''}`;
}

/** `12 passed, 1 failed (13 cases in 2 files, 1 invalid file; 340 ms)`. */
export function formatSummary(files: readonly FileOutcome[], elapsedMs: number): string {
  const cases = files.flatMap((f) => f.cases);
  const ok = cases.filter(passed).length;
  const invalid = files.filter((f) => f.invalid).length;
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [`${count(cases.length, 'case')} in ${count(files.length, 'file')}`];
  if (invalid > 0) parts.push(`${count(invalid, 'invalid file')}`);
  return `${ok} passed, ${cases.length - ok} failed (${parts.join(', ')}; ${Math.round(elapsedMs)} ms)\n`;
}

/** The outcomes as a JUnit XML report: a suite per file, a test case per case. */
export function junitReport(files: readonly FileOutcome[]): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const all = files.flatMap((f) => f.cases);
  const failures = all.filter((c) => !passed(c)).length;
  const errors = files.filter((f) => f.invalid).length;
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const total = files.reduce((sum, f) => sum + f.durationMs, 0);
  out.push(
    `<testsuites name="endpoint-sync test" tests="${all.length}" failures="${failures}" errors="${errors}" time="${seconds(total)}">`,
  );
  for (const file of files) {
    const failed = file.cases.filter((c) => !passed(c)).length;
    out.push(
      `  <testsuite name="${xml(file.file)}" tests="${file.cases.length}" failures="${failed}" errors="${file.invalid ? 1 : 0}" time="${seconds(file.durationMs)}">`,
    );
    if (file.invalid) {
      out.push(
        `    <testcase name="${xml(file.file)}" classname="${xml(file.file)}" file="${xml(file.file)}">`,
        `      <error message="the test file is invalid; run endpoint-sync test on it for its diagnostics"/>`,
        '    </testcase>',
      );
    }
    for (const c of file.cases) {
      const head = `    <testcase name="${xml(c.name)}" classname="${xml(file.file)}" file="${xml(file.file)}" line="${c.line}" time="${seconds(c.durationMs)}"`;
      if (passed(c)) {
        out.push(`${head}/>`);
        continue;
      }
      const details = [
        ...(c.error === undefined ? [] : [c.error]),
        ...c.mismatches.flatMap((m) => [`${m.field}: expected (-) against actual (+)`, ...m.diff]),
      ];
      const message = c.error ?? `${c.mismatches.map((m) => m.field).join(', ')} differ`;
      out.push(
        `${head}>`,
        `      <failure message="${xml(message)}">${xml(details.join('\n'))}</failure>`,
        '    </testcase>',
      );
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

/**
 * Text for an XML attribute or element: the five markup characters escaped, and the characters
 * XML 1.0 cannot hold at all (most control characters) written as `\uXXXX`.
 */
export function xml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;')
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML forbids
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

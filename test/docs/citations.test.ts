/**
 * Comments and docs cite only what a reader of this repository can open: a page of `docs/`
 * (and, when named, one of its sections), never a design note kept somewhere else. A citation of
 * a file outside the repository, or of a docs page or section that does not exist, fails here
 * with the file and line that holds it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SCANNED = [
  'lib',
  'functions',
  'test',
  'bench',
  'docs',
  'examples',
  'deploy',
  'scripts',
  'schema',
  'README.md',
];
/** Generated or vendored text the project does not write. */
const SKIPPED = new Set(['node_modules', 'dist', 'vendor', '.git']);
const TEXT = /\.(ts|md|ya?ml|json|sh|mjs|js)$/;

/**
 * Ways a design note outside the repository gets cited. Spelled in pieces so that this file does
 * not match itself.
 */
const OUTSIDE = [
  new RegExp(`\\b${'SEMAN'}TICS\\b`),
  new RegExp(`\\b${'KUBE'}-API\\b`),
  new RegExp(`\\b(?:${'ARCHI'}TECTURE|${'STA'}CK|${'STY'}LE)\\.md\\b`),
  new RegExp(`\\.\\./(?:${'sha'}red|${'spe'}c|${'desi'}gn)\\b`),
  new RegExp(`\\b${'desi'}gn/[A-Z]`),
];

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return TEXT.test(path) ? [path] : [];
  const out: string[] = [];
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const child = join(path, entry.name);
    if (entry.isDirectory()) out.push(...files(child));
    else if (TEXT.test(entry.name)) out.push(child);
  }
  return out;
}

/** A heading's text as a citation quotes it: without `#`, backticks and emphasis. */
function headingText(line: string): string {
  return line
    .replace(/^#+\s*/, '')
    .replace(/[`*_]/g, '')
    .trim();
}

/** Comment text with the line breaks and comment leaders of a wrapped citation removed. */
function unwrapped(text: string): string {
  return text.replace(/\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ');
}

/** A section is cited by its heading or the start of it (`"Errors"` for "Errors (`errors.ts`)"). */
function hasSection(headings: Set<string>, cited: string): boolean {
  const wanted = cited.toLowerCase();
  return [...headings].some((h) => h.toLowerCase().startsWith(wanted));
}

const CITATION = /docs\/([a-z0-9-]+\.md)(?:,\s+"([^"]+)")?/g;

const scanned = SCANNED.flatMap(files);
const self = relative(ROOT, import.meta.filename);

describe('citations', () => {
  it('scans the source, tests, benchmarks and docs', () => {
    expect(scanned).toContain('lib/sync/plan.ts');
    expect(scanned).toContain('docs/sync.md');
    expect(scanned.some((f) => f.includes('/vendor/'))).toBe(false);
  });

  it('never point at a file outside the repository', () => {
    const found: string[] = [];
    for (const file of scanned) {
      if (file === self) continue;
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (OUTSIDE.some((pattern) => pattern.test(line))) found.push(`${file}:${index + 1}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('name docs pages and sections that exist', () => {
    const headings = new Map<string, Set<string>>();
    const sectionsOf = (page: string): Set<string> | undefined => {
      if (!headings.has(page)) {
        const path = join(ROOT, 'docs', page);
        if (!existsSync(path)) return undefined;
        const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, '');
        headings.set(
          page,
          new Set(
            text
              .split('\n')
              .filter((l) => l.startsWith('#'))
              .map(headingText),
          ),
        );
      }
      return headings.get(page);
    };
    const broken: string[] = [];
    let citations = 0;
    for (const file of scanned) {
      if (file === self || file.startsWith('docs/')) continue;
      for (const match of unwrapped(readFileSync(join(ROOT, file), 'utf8')).matchAll(CITATION)) {
        citations++;
        const [, page = '', section] = match;
        const sections = sectionsOf(page);
        if (sections === undefined) broken.push(`${file}: docs/${page} does not exist`);
        else if (section !== undefined && !hasSection(sections, section))
          broken.push(`${file}: docs/${page} has no section "${section}"`);
      }
    }
    expect(broken).toEqual([]);
    expect(citations).toBeGreaterThan(10);
  });

  it('catch each way a design note gets cited', () => {
    const cited = [
      'SEMAN' + 'TICS 3.2',
      'see KUBE' + '-API.md',
      '(STA' + 'CK.md)',
      '../sha' + 'red/x',
    ];
    for (const text of cited)
      expect(
        OUTSIDE.some((p) => p.test(text)),
        text,
      ).toBe(true);
    for (const text of ['namespaces/shared/secrets', 'docs/sync.md', 'the design of it'])
      expect(
        OUTSIDE.some((p) => p.test(text)),
        text,
      ).toBe(false);
  });
});

/**
 * Where the conformance cases come from. Every case names the vcluster file (or docs page) it
 * was derived from, at the version below, so a reader can check the expected output against
 * the source.
 */

/** The vcluster release the cases were read from (the files cited are unchanged on main). */
export const VCLUSTER_VERSION = 'v0.36.0';

/** The vcluster docs version the docs-page cases were read from. */
export const VCLUSTER_DOCS_VERSION = '0.36.0';

/** `file@version`: the citation of a case derived from vcluster's code or tests. */
export function source(file: string): string {
  return `loft-sh/vcluster ${file}@${VCLUSTER_VERSION}`;
}

/** The citation of a case derived from a vcluster docs page. */
export function docs(page: string): string {
  return `vcluster docs ${VCLUSTER_DOCS_VERSION} ${page}`;
}

/**
 * `same`: endpoint-sync gives vcluster's result. `deliberate`: it differs on purpose.
 * `open`: it differs and the difference is not closed yet. The case asserts what endpoint-sync
 * does; docs/vcluster-compatibility.md lists every difference with its case.
 */
export type Conformance = 'same' | 'deliberate' | 'open';

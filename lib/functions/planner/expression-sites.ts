/**
 * The expression sites of a configuration: every `expression` and `reverseExpression` of every
 * patch, numbered in one fixed order. The plan worker reports the number of the site it is
 * evaluating through the evaluation clock, and the main thread, which holds the same
 * configuration, turns it back into a config path for the failure message, so that a stopped
 * evaluation names its patch without the worker sending anything.
 */
import type { SyncConfig } from '../../config/types.ts';

/** One expression of one patch. */
export interface ExpressionSite {
  /** e.g. `sync.toHost.endpoints.patches[1]`. */
  configPath: string;
  field: 'expression' | 'reverseExpression';
  source: string;
}

/** Every expression of `config`, in the order of its owned sections and their patches. */
export function expressionSites(config: SyncConfig): ExpressionSite[] {
  const sites: ExpressionSite[] = [];
  for (const section of Object.values(config.resources ?? {})) {
    for (const patch of section?.patches ?? []) {
      for (const field of ['expression', 'reverseExpression'] as const) {
        const source = patch[field];
        if (typeof source === 'string') sites.push({ configPath: patch.configPath, field, source });
      }
    }
  }
  return sites;
}

/** Source -> the number of its first site (two patches with the same code share a number). */
export function siteIndex(sites: readonly ExpressionSite[]): Map<string, number> {
  const index = new Map<string, number>();
  sites.forEach((site, i) => {
    if (!index.has(site.source)) index.set(site.source, i);
  });
  return index;
}

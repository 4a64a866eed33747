/**
 * "Did you mean" for misspelt keys: the closest allowed key by edit distance, when it is close
 * enough that the suggestion is more likely right than noise.
 */

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions, so `enabeld`
 * is one edit from `enabled`).
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to `word`, or `undefined` when none is close. A case-only difference
 * always counts as close (`configmaps` -> `configMaps`); otherwise at most a third of the
 * word's length may differ (at least one edit, at most three).
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  const caseOnly = candidates.find((c) => c.toLowerCase() === lower);
  if (caseOnly !== undefined) return caseOnly;
  // Long keys are never worth comparing; they also keep the quadratic distance cheap.
  if (word.length > 64) return undefined;
  // A cut-short or overlong key (`patch`, `endpointsx`) is a typo of the key it extends.
  if (word.length >= 3) {
    const affix = candidates.find((c) => {
      const cl = c.toLowerCase();
      return (
        Math.abs(cl.length - lower.length) <= 3 && (cl.startsWith(lower) || lower.startsWith(cl))
      );
    });
    if (affix !== undefined) return affix;
  }
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean "x"?)` or the empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closestMatch(word, candidates);
  return match === undefined ? '' : ` (did you mean "${match}"?)`;
}

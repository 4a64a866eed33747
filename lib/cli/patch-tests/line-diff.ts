/**
 * A line diff of two texts, for a person to read: the longest common subsequence of their lines,
 * unchanged lines kept for context. Test expectations are small (one object), so the quadratic
 * table is cheap; past {@link MAX_CELLS} the texts are shown whole, one after the other.
 */

/** Largest table (lines x lines) computed; about 8 MB. */
const MAX_CELLS = 1_000_000;

/** `- ` for a line only `expected` has, `+ ` for one only `actual` has, `  ` for both. */
export function lineDiff(expected: string, actual: string): string[] {
  const a = splitLines(expected);
  const b = splitLines(actual);
  if (a.length * b.length > MAX_CELLS) {
    return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  }
  // common[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const common = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      common[i * width + j] =
        a[i] === b[j]
          ? common[(i + 1) * width + j + 1]! + 1
          : Math.max(common[(i + 1) * width + j]!, common[i * width + j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (
      i < a.length &&
      (j === b.length || common[(i + 1) * width + j]! >= common[i * width + j + 1]!)
    ) {
      out.push(`- ${a[i]}`);
      i++;
    } else {
      out.push(`+ ${b[j]}`);
      j++;
    }
  }
  return out;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

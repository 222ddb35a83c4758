/**
 * A line diff small enough to read: common prefix and suffix are trimmed, the middle is aligned
 * by longest common subsequence when that is cheap, and otherwise reported as one replacement.
 * Prose files are paragraphs per line, so line granularity is what an author thinks of as "an edit".
 */
export interface DiffHunk {
  removed: string[];
  added: string[];
  /** Character range the added lines occupy in the new text (empty range for a pure removal). */
  newStart: number;
  newEnd: number;
}

const MAX_LCS_CELLS = 4_000_000;

export function diffLines(before: string, after: string): DiffHunk[] {
  if (before === after) return [];
  const oldLines = before.split('\n');
  const newLines = after.split('\n');
  const newOffsets = lineOffsets(newLines);

  let prefix = 0;
  while (prefix < oldLines.length && prefix < newLines.length && oldLines[prefix] === newLines[prefix]) {
    prefix++;
  }
  let suffix = 0;
  while (
    suffix < oldLines.length - prefix &&
    suffix < newLines.length - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  const oldMiddle = oldLines.slice(prefix, oldLines.length - suffix);
  const newMiddle = newLines.slice(prefix, newLines.length - suffix);
  const pairs =
    oldMiddle.length * newMiddle.length <= MAX_LCS_CELLS ? commonSubsequence(oldMiddle, newMiddle) : [];

  const hunks: DiffHunk[] = [];
  let oldIndex = 0;
  let newIndex = 0;
  for (const [oldMatch, newMatch] of [...pairs, [oldMiddle.length, newMiddle.length] as const]) {
    if (oldMatch > oldIndex || newMatch > newIndex) {
      const firstNew = prefix + newIndex;
      const lastNew = prefix + newMatch;
      hunks.push({
        removed: oldMiddle.slice(oldIndex, oldMatch),
        added: newMiddle.slice(newIndex, newMatch),
        newStart: newOffsets[firstNew]!,
        newEnd:
          lastNew > firstNew
            ? newOffsets[lastNew - 1]! + newLines[lastNew - 1]!.length
            : newOffsets[firstNew]!,
      });
    }
    oldIndex = oldMatch + 1;
    newIndex = newMatch + 1;
  }
  return hunks;
}

function lineOffsets(lines: string[]): number[] {
  const offsets: number[] = [];
  let offset = 0;
  for (const line of lines) {
    offsets.push(offset);
    offset += line.length + 1;
  }
  offsets.push(offset);
  return offsets;
}

/** Index pairs of one longest common subsequence, in order. */
function commonSubsequence(a: string[], b: string[]): Array<readonly [number, number]> {
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j]
          ? table[(i + 1) * width + j + 1]! + 1
          : Math.max(table[(i + 1) * width + j]!, table[i * width + j + 1]!);
    }
  }
  const pairs: Array<readonly [number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (table[(i + 1) * width + j]! >= table[i * width + j + 1]!) i++;
    else j++;
  }
  return pairs;
}

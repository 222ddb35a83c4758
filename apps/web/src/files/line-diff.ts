/** One line of a two-sided comparison: in both texts, only in theirs, or only in mine. */
export interface DiffLine {
  kind: 'same' | 'theirs' | 'mine';
  text: string;
}

/**
 * A line diff (longest common subsequence), enough for the conflict view to show what differs
 * between two versions of a chapter. Quadratic in lines, so very long files fall back to showing
 * both texts whole (every line marked) rather than freezing the tab.
 */
export function diffLines(theirs: string, mine: string, maxCells = 4_000_000): DiffLine[] {
  const a = theirs.split('\n');
  const b = mine.split('\n');
  if (a.length * b.length > maxCells) {
    return [
      ...a.map((text) => ({ kind: 'theirs' as const, text })),
      ...b.map((text) => ({ kind: 'mine' as const, text })),
    ];
  }
  // lengths[i][j]: the common subsequence length of a[i..] and b[j..].
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      lines.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!)
      lines.push({ kind: 'theirs', text: a[i++]! });
    else lines.push({ kind: 'mine', text: b[j++]! });
  }
  while (i < a.length) lines.push({ kind: 'theirs', text: a[i++]! });
  while (j < b.length) lines.push({ kind: 'mine', text: b[j++]! });
  return lines;
}

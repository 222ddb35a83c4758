import { createTwoFilesPatch, formatPatch } from 'diff';

/**
 * The most line edits the diff looks for before it gives up. Its algorithm (Myers) takes time in
 * the product of the texts' length and their distance: two unrelated 10,000-line versions of a
 * file took 12 s of the gateway's event loop (every stream it serves waiting), and a file may hold
 * a million characters. With this bound the worst case is a few hundred milliseconds; an edit of a
 * real chapter is far below it.
 */
export const MAX_PATCH_EDITS = 1000;

/**
 * A unified diff of one file between two versions. Past MAX_PATCH_EDITS it is one hunk that
 * replaces the whole text: still a correct patch, only not the smallest.
 */
export function filePatch(oldName: string, newName: string, oldText: string, newText: string): string {
  return (
    createTwoFilesPatch(oldName, newName, oldText, newText, undefined, undefined, {
      maxEditLength: MAX_PATCH_EDITS,
    }) ?? replacementPatch(oldName, newName, oldText, newText)
  );
}

/** Every line of the old text removed, every line of the new one added, as `diff` writes them. */
export function replacementPatch(oldName: string, newName: string, oldText: string, newText: string): string {
  const oldLines = patchLines(oldText, '-');
  const newLines = patchLines(newText, '+');
  return formatPatch({
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [
      {
        // formatPatch writes an empty side's start one lower (`-0,0`), as unified diffs do.
        oldStart: 1,
        oldLines: oldLines.count,
        newStart: 1,
        newLines: newLines.count,
        lines: [...oldLines.lines, ...newLines.lines],
      },
    ],
  });
}

function patchLines(text: string, sign: '-' | '+'): { count: number; lines: string[] } {
  if (text === '') return { count: 0, lines: [] };
  const lines = text.split('\n');
  const endsWithNewline = lines.at(-1) === '';
  if (endsWithNewline) lines.pop();
  const marked = lines.map((line) => `${sign}${line}`);
  if (!endsWithNewline) marked.push('\\ No newline at end of file');
  return { count: lines.length, lines: marked };
}

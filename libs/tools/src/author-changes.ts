import { hasAuthorVersionAfter, latestVersionBySource, type Queryable } from '@quill/db';
import { type DiffHunk, diffLines } from './line-diff.ts';

/**
 * What the author changed since the AI last wrote a file (docs/agent-behaviour.md 「作者改了什么给模型看，不猜授权」):
 * the net diff from the newest AI version to the current text, computed from the version
 * history. The model is shown it; nothing is inferred from it about what the author allows.
 */
export interface AuthorEdits {
  sinceAiVersion: number;
  hunks: DiffHunk[];
  /** The `<author_edits>` block put in front of the model. */
  rendered: string;
}

const MAX_RENDERED_CHARS = 4000;
const MAX_LINE_CHARS = 300;

export async function authorEditsSinceAi(
  db: Queryable,
  file: { id: string; content: string; version: number },
): Promise<AuthorEdits | undefined> {
  const lastAi = await latestVersionBySource(db, file.id, 'ai');
  if (!lastAi || lastAi.version >= file.version) return undefined;
  if (!(await hasAuthorVersionAfter(db, file.id, lastAi.version))) return undefined;
  const hunks = diffLines(lastAi.content, file.content);
  if (hunks.length === 0) return undefined;
  return { sinceAiVersion: lastAi.version, hunks, rendered: render(lastAi.version, hunks) };
}

/** Whether the character range [start, end) of the current text touches a passage the author wrote. */
export function touchesAuthorEdits(edits: AuthorEdits | undefined, start: number, end: number): boolean {
  if (!edits) return false;
  return edits.hunks.some((hunk) =>
    start === end
      ? start >= hunk.newStart && start <= hunk.newEnd
      : start < Math.max(hunk.newEnd, hunk.newStart + 1) && end > hunk.newStart,
  );
}

function render(sinceVersion: number, hunks: DiffHunk[]): string {
  const lines = [`<author_edits since_ai_version="${sinceVersion}">`];
  let used = 0;
  let shown = 0;
  for (const hunk of hunks) {
    const block = [
      ...hunk.removed.map((line) => `- ${clip(line)}`),
      ...hunk.added.map((line) => `+ ${clip(line)}`),
    ].join('\n');
    if (used + block.length > MAX_RENDERED_CHARS) break;
    lines.push(block, '');
    used += block.length;
    shown++;
  }
  if (shown < hunks.length) lines.push(`(… ${hunks.length - shown} more change(s) not shown)`);
  lines.push('</author_edits>');
  return lines.join('\n');
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

import type { RunStartEnvelope, StepResult } from '@quill/contracts';
import { getFile, getPreRunContents } from '@quill/db';
import type { Pool } from 'pg';
import type { ReviewEvidence } from './handoff-packet.ts';
import { citedFiles, type ReviewFile } from './review-content.ts';
import { countWords } from './review-evidence.ts';
import { BODY_FILE_TYPES } from './workflow-plan.ts';

/**
 * The review evidence's reads have a time limit (docs/agent-behaviour.md 「送审证据」): a slow
 * database delays the reviewer by at most this much, and what was not read by then is named as
 * unread rather than waited for.
 */
export const EVIDENCE_READ_LIMIT_MS = 10_000;

export interface TimedReads<T> {
  /** Reads that finished in time, by key. */
  done: Map<string, T>;
  /** Keys whose read failed or was still running at the limit, in the order asked. */
  late: string[];
}

export async function readWithin<T>(
  reads: ReadonlyArray<{ key: string; read: () => Promise<T> }>,
  limitMs: number = EVIDENCE_READ_LIMIT_MS,
): Promise<TimedReads<T>> {
  const done = new Map<string, T>();
  const all = Promise.allSettled(
    reads.map(async ({ key, read }) => {
      done.set(key, await read());
    }),
  );
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, limitMs);
  });
  await Promise.race([all, limit]);
  clearTimeout(timer);
  // A late read may still finish later; the snapshot taken now is what the evidence uses.
  const settled = new Map(done);
  return { done: settled, late: reads.map((read) => read.key).filter((key) => !settled.has(key)) };
}

/**
 * The stored text (and the text before the run's first write) of the files a review is about:
 * the body files the run wrote, or for a revision the files the last review cites.
 */
export async function loadReviewEvidence(
  pool: Pool,
  start: Pick<RunStartEnvelope, 'project_id' | 'run_id'>,
  prior: readonly StepResult[],
  revision: boolean,
): Promise<ReviewEvidence> {
  const written = new Map<string, { id: string; title: string }>();
  for (const result of prior) {
    for (const write of result.files_written) {
      if (revision || BODY_FILE_TYPES.includes(write.file_type)) {
        written.set(write.file_id, { id: write.file_id, title: write.title });
      }
    }
  }
  let targets = [...written.values()];
  if (revision) {
    const review = [...prior].reverse().find((result) => result.role === 'quality_reviewer');
    targets = citedFiles(review?.final_text ?? '', targets);
  }
  const ids = targets.map((target) => target.id);
  // The stored texts and the earlier ones are read side by side, under the same time limit.
  const [reads, earlier] = await Promise.all([
    readWithin(
      targets.map((target) => ({
        key: target.id,
        read: async (): Promise<ReviewFile | null> => {
          const file = await getFile(pool, start.project_id, target.id);
          return file
            ? { id: file.id, title: file.title, updatedAt: file.updatedAt, content: file.content }
            : null;
        },
      })),
    ),
    readWithin([{ key: 'before', read: () => getPreRunContents(pool, start.run_id, ids) }]),
  ]);
  const before = earlier.done.get('before') ?? new Map<string, string>();
  const files: ReviewFile[] = [];
  for (const target of targets) {
    const file = reads.done.get(target.id);
    // A file deleted since is simply gone; without its earlier text the head is shown.
    if (file) files.push({ ...file, ...(before.has(file.id) ? { before: before.get(file.id) } : {}) });
  }
  const late = new Set(reads.late);
  return {
    files,
    words: new Map(files.map((file) => [file.id, countWords(file.content)])),
    unread: targets.filter((target) => late.has(target.id)),
  };
}

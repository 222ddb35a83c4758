import { visibleMessagesSql } from '../branch-path.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/** A stored chat message with its insertion sequence, the compaction boundary's unit. */
export interface HistoryMessage {
  id: string;
  seq: number;
  runId: string | null;
  role: 'user' | 'assistant';
  content: string;
  breadcrumbs: unknown;
  createdAt: string;
}

/** A message row as the history reads select it (`seq` is int8: a string from pg, a number in JSON). */
export interface HistoryMessageRow {
  id: string;
  seq: number | string;
  run_id: string | null;
  role: 'user' | 'assistant';
  content: string;
  breadcrumbs: unknown;
  created_at: string;
}

export const toHistoryMessage = (row: HistoryMessageRow): HistoryMessage => ({
  id: row.id,
  seq: Number(row.seq),
  runId: row.run_id,
  role: row.role,
  content: row.content,
  breadcrumbs: row.breadcrumbs,
  createdAt: row.created_at,
});

export interface HistoryCompaction {
  id: string;
  sessionId: string;
  throughSeq: number;
  summary: string;
  archiveFileId: string | null;
  compactedMessages: number;
  createdAt: string;
}

export interface CompactionRow {
  id: string;
  session_id: string;
  through_seq: number;
  summary: string;
  archive_file_id: string | null;
  compacted_messages: number;
  created_at: string;
}

export const toCompaction = (row: CompactionRow): HistoryCompaction => ({
  id: row.id,
  sessionId: row.session_id,
  throughSeq: Number(row.through_seq),
  summary: row.summary,
  archiveFileId: row.archive_file_id,
  compactedMessages: row.compacted_messages,
  createdAt: row.created_at,
});

/**
 * Messages of the session after `afterSeq` (the compaction boundary), oldest first: only those on
 * the path of the session's active branch (docs/kernel.md "Branches"), so a run compiles from its
 * own branch's history (a run starts on the active branch and the branch cannot change while a
 * run is active).
 */
export async function listHistoryMessages(
  db: Queryable,
  sessionId: string,
  options: { afterSeq?: number; limit?: number } = {},
): Promise<HistoryMessage[]> {
  if (!isUuid(sessionId)) return [];
  const { rows } = await db.query<HistoryMessageRow>(
    `WITH RECURSIVE ${visibleMessagesSql('$1::uuid')}
     SELECT * FROM (
       SELECT m.id, m.seq, m.run_id, m.role, m.content, m.breadcrumbs, m.created_at
       FROM messages m JOIN visible v ON v.id = m.id
       WHERE m.seq > $2
       ORDER BY m.created_at DESC, m.seq DESC LIMIT $3
     ) latest ORDER BY created_at, seq`,
    [sessionId, options.afterSeq ?? 0, options.limit ?? 1000],
  );
  return rows.map(toHistoryMessage);
}

export async function getLatestCompaction(
  db: Queryable,
  sessionId: string,
): Promise<HistoryCompaction | null> {
  if (!isUuid(sessionId)) return null;
  const { rows } = await db.query<CompactionRow>(
    `SELECT id, session_id, through_seq, summary, archive_file_id, compacted_messages, created_at
     FROM history_compactions WHERE session_id = $1 ORDER BY through_seq DESC LIMIT 1`,
    [sessionId],
  );
  return rows[0] ? toCompaction(rows[0]) : null;
}

/**
 * Records a compaction boundary. Two compiles racing to compact the same history write the same
 * boundary; the unique key keeps the first and both read it back.
 */
export async function saveCompaction(
  db: Queryable,
  input: {
    sessionId: string;
    throughSeq: number;
    summary: string;
    archiveFileId: string | null;
    /** The evicted messages' full text, appended to the archive file by the session's next step. */
    archiveSection: string | null;
    compactedMessages: number;
  },
): Promise<HistoryCompaction> {
  await db.query(
    `INSERT INTO history_compactions
       (session_id, through_seq, summary, archive_file_id, archive_section, compacted_messages)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (session_id, through_seq) DO NOTHING`,
    [
      input.sessionId,
      input.throughSeq,
      input.summary,
      input.archiveFileId,
      input.archiveSection,
      input.compactedMessages,
    ],
  );
  const { rows } = await db.query<CompactionRow>(
    `SELECT id, session_id, through_seq, summary, archive_file_id, compacted_messages, created_at
     FROM history_compactions WHERE session_id = $1 AND through_seq = $2`,
    [input.sessionId, input.throughSeq],
  );
  return toCompaction(rows[0]!);
}

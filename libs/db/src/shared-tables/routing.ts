import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Storage the workflow router needs around a run: the routing JSON on the author's message,
 * whether the work has any AI reply yet (first-message rules) and the runs left waiting for the
 * author.
 */

export async function getMessageRouting(db: Queryable, messageId: string): Promise<unknown> {
  if (!isUuid(messageId)) return null;
  const { rows } = await db.query<{ routing: unknown }>('SELECT routing FROM messages WHERE id = $1', [
    messageId,
  ]);
  return rows[0]?.routing ?? null;
}

/** Shallow-merges `patch` into the message's routing JSON (creating it when absent). */
export async function mergeMessageRouting(
  db: Queryable,
  messageId: string,
  patch: Record<string, unknown>,
): Promise<boolean> {
  if (!isUuid(messageId)) return false;
  const { rowCount } = await db.query(
    `UPDATE messages SET routing = COALESCE(routing, '{}'::jsonb) || $2::jsonb WHERE id = $1`,
    [messageId, JSON.stringify(patch)],
  );
  return rowCount === 1;
}

/** True when any session of the project already holds an assistant reply. */
export async function projectHasAssistantReply(db: Queryable, projectId: string): Promise<boolean> {
  if (!isUuid(projectId)) return false;
  const { rows } = await db.query<{ found: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM messages m JOIN sessions s ON s.session_id = m.session_id
       WHERE s.project_id = $1 AND m.role = 'assistant'
     ) AS found`,
    [projectId],
  );
  return rows[0]?.found === true;
}

/** The session's runs still waiting for the author, but `exceptRunId` (the run answering them). */
export async function listWaitingRuns(
  db: Queryable,
  sessionId: string,
  exceptRunId: string,
): Promise<string[]> {
  if (!isUuid(sessionId) || !isUuid(exceptRunId)) return [];
  const { rows } = await db.query<{ run_id: string }>(
    `SELECT run_id FROM runs WHERE session_id = $1 AND phase = 'waiting_user' AND run_id <> $2`,
    [sessionId, exceptRunId],
  );
  return rows.map((row) => row.run_id);
}

import { visibleMessagesSql } from '../branch-path.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Storage the workflow router needs around a run: the routing JSON on the author's message,
 * whether the work has any AI reply yet (first-message rules) and the runs left waiting for the
 * author.
 */

/** What the router decides a run's route from (docs/agent-behaviour.md 「Router」). */
export interface RoutingContext {
  /** The routing JSON already stored on the run's message (a run taken over was routed). */
  storedRouting: unknown;
  /** The latest assistant reply before the run's message on the session's active branch path. */
  previousAssistant: string | undefined;
  /** The routing JSON of the author's earlier messages that have one, oldest first. */
  priorRoutings: unknown[];
  clarificationPending: boolean;
  /** Whether any session of the project already holds an assistant reply (first-message rules). */
  answeredBefore: boolean;
}

/** How far back the router looks for the previous reply and routing: the latest messages of the path. */
const ROUTING_WINDOW = 200;

/**
 * The router's reads for one run in one statement, on the way to the first token. "Before the
 * run's message" is the order of the session's active branch path (branch-path.ts) within its
 * latest ROUTING_WINDOW messages; when the message is not among them, every message of other
 * runs counts. Only the one previous reply's text is read: the rest of the history stays in the
 * database (the context compiler reads what the model sees).
 */
export async function readRoutingContext(
  db: Queryable,
  run: { sessionId: string; messageId: string; runId: string; projectId: string },
): Promise<RoutingContext> {
  const uuidOrNull = (value: string) => (isUuid(value) ? value : null);
  const { rows } = await db.query<{
    stored_routing: unknown;
    previous_assistant: string | null;
    prior_routings: unknown[] | null;
    clarification_pending: boolean | null;
    answered_before: boolean;
  }>(
    `WITH RECURSIVE ${visibleMessagesSql('$1::uuid')},
     latest AS (
       SELECT id, run_id, role, routing, created_at, seq FROM messages
       WHERE id IN (SELECT id FROM visible)
       ORDER BY created_at DESC, seq DESC LIMIT $5
     ),
     current_message AS (SELECT created_at, seq FROM latest WHERE id = $2::uuid),
     prior AS (
       SELECT * FROM latest l
       WHERE CASE WHEN EXISTS (SELECT 1 FROM current_message)
         THEN (l.created_at, l.seq) < (SELECT created_at, seq FROM current_message)
         ELSE l.run_id IS DISTINCT FROM $3::uuid END
     )
     SELECT
       (SELECT routing FROM messages WHERE id = $2::uuid) AS stored_routing,
       (SELECT m.content FROM prior p JOIN messages m ON m.id = p.id WHERE p.role = 'assistant'
        ORDER BY p.created_at DESC, p.seq DESC LIMIT 1) AS previous_assistant,
       (SELECT json_agg(p.routing ORDER BY p.created_at, p.seq) FROM prior p
        WHERE p.role = 'user' AND p.routing IS NOT NULL) AS prior_routings,
       (SELECT COALESCE(sp.clarification_pending, false) FROM sessions s
        LEFT JOIN session_phases sp ON sp.session_id = s.session_id
        WHERE s.session_id = $1::uuid) AS clarification_pending,
       EXISTS (
         SELECT 1 FROM messages m JOIN sessions s ON s.session_id = m.session_id
         WHERE s.project_id = $4::uuid AND m.role = 'assistant'
       ) AS answered_before`,
    [
      uuidOrNull(run.sessionId),
      uuidOrNull(run.messageId),
      uuidOrNull(run.runId),
      uuidOrNull(run.projectId),
      ROUTING_WINDOW,
    ],
  );
  const row = rows[0];
  return {
    storedRouting: row?.stored_routing ?? null,
    previousAssistant: row?.previous_assistant ?? undefined,
    priorRoutings: row?.prior_routings ?? [],
    clarificationPending: row?.clarification_pending === true,
    answeredBefore: row?.answered_before === true,
  };
}

/**
 * The UPDATE that shallow-merges a patch (a jsonb parameter) into a message's routing JSON,
 * creating it when absent; also a CTE of the router's end-of-run statement (router/run-end.ts).
 */
export function messageRoutingMergeSql(values: { message: string; patch: string }): string {
  return `UPDATE messages SET routing = COALESCE(routing, '{}'::jsonb) || ${values.patch}::jsonb
     WHERE id = ${values.message}`;
}

/** Shallow-merges `patch` into the message's routing JSON (creating it when absent). */
export async function mergeMessageRouting(
  db: Queryable,
  messageId: string,
  patch: Record<string, unknown>,
): Promise<boolean> {
  if (!isUuid(messageId)) return false;
  const { rowCount } = await db.query(messageRoutingMergeSql({ message: '$1', patch: '$2' }), [
    messageId,
    JSON.stringify(patch),
  ]);
  return rowCount === 1;
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

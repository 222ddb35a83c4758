import { visibleMessagesSql } from '../branch-path.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

export type MessageRole = 'user' | 'assistant';

export interface Message {
  id: string;
  sessionId: string;
  runId: string | null;
  role: MessageRole;
  content: string;
  routing: unknown;
  breadcrumbs: unknown;
  createdAt: string;
}

interface MessageRow {
  id: string;
  session_id: string;
  run_id: string | null;
  role: MessageRole;
  content: string;
  routing: unknown;
  breadcrumbs: unknown;
  created_at: string;
}

const MESSAGE_COLUMNS = 'id, session_id, run_id, role, content, routing, breadcrumbs, created_at';

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    sessionId: row.session_id,
    runId: row.run_id,
    role: row.role,
    content: row.content,
    routing: row.routing,
    breadcrumbs: row.breadcrumbs,
    createdAt: row.created_at,
  };
}

/**
 * Appends a message. The session's last activity (sessions.updated_at, the gateway's) is marked
 * by the gateway when the author writes (touchSession), not here: the router appends replies.
 */
export async function appendMessage(
  db: Queryable,
  input: {
    sessionId: string;
    runId?: string | null;
    role: MessageRole;
    content: string;
    routing?: unknown;
    breadcrumbs?: unknown;
    id?: string;
  },
): Promise<Message> {
  const { rows } = await db.query<MessageRow>(
    `INSERT INTO messages (id, session_id, run_id, role, content, routing, breadcrumbs)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7)
     RETURNING ${MESSAGE_COLUMNS}`,
    [
      input.id ?? null,
      input.sessionId,
      input.runId ?? null,
      input.role,
      input.content,
      messageJson(input.routing),
      messageJson(input.breadcrumbs),
    ],
  );
  return toMessage(rows[0]!);
}

/**
 * The INSERT of the author's message of a run, returning its id; a CTE of the launch's single
 * statement (gateway/run-launch.ts). Same row as appendMessage with role `user` and no routing.
 */
export function authorMessageInsertSql(values: { session: string; run: string; content: string }): string {
  return `INSERT INTO messages (id, session_id, run_id, role, content)
     VALUES (gen_random_uuid(), ${values.session}, ${values.run}, 'user', ${values.content})
     RETURNING id`;
}

/**
 * The INSERT of a round's reply, a CTE of the router's end-of-run statement (router/run-end.ts):
 * the same row appendMessage writes for `assistant`, written only when `when` (SQL) holds.
 */
export function assistantReplyInsertSql(values: {
  session: string;
  run: string;
  content: string;
  breadcrumbs: string;
  when: string;
}): string {
  return `INSERT INTO messages (id, session_id, run_id, role, content, breadcrumbs)
     SELECT gen_random_uuid(), ${values.session}, ${values.run}, 'assistant', ${values.content}, ${values.breadcrumbs}
     WHERE ${values.when}
     RETURNING id`;
}

/**
 * A message's JSON column (routing, breadcrumbs) as a statement parameter: pg would send a JS
 * array as a Postgres array literal, not JSON, so everything is stringified here.
 */
export function messageJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** The latest `limit` messages on the session's active branch path (branch-path.ts), oldest first. */
export async function listMessages(
  db: Queryable,
  sessionId: string,
  options: { limit?: number } = {},
): Promise<Message[]> {
  if (!isUuid(sessionId)) return [];
  const { rows } = await db.query<MessageRow>(
    `WITH RECURSIVE ${visibleMessagesSql('$1::uuid')}
     SELECT ${MESSAGE_COLUMNS} FROM (
       SELECT ${MESSAGE_COLUMNS}, seq FROM messages WHERE id IN (SELECT id FROM visible)
       ORDER BY created_at DESC, seq DESC LIMIT $2
     ) latest ORDER BY created_at, seq`,
    [sessionId, options.limit ?? 200],
  );
  return rows.map(toMessage);
}

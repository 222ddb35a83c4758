import { createHash } from 'node:crypto';
import type { Phase } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Definitions and pinning (docs/kernel.md "Definitions and pinning"): a role's definition —
 * its prompt, tool set, model and budget settings — is a versioned record. A service seeds the
 * definitions its code carries at start-up, by content hash, so a deploy that changes a prompt
 * adds a version instead of changing the one running sessions use. A session pins the versions
 * it started with; only an explicit upgrade moves it.
 */
export interface RoleDefinition {
  prompt: string;
  tools: readonly string[];
  model: Record<string, unknown>;
  budget: Record<string, unknown>;
}

export interface PinnedDefinition {
  role: string;
  version: number;
  definition: RoleDefinition;
}

/** The content hash of a definition: key order does not matter, every value does. */
export function definitionHash(definition: RoleDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Records the definition a starting service carries and makes it the role's current one; the
 * same content is the same version. Run in a transaction: replicas starting together serialise
 * on the role's advisory lock, so they agree on the version number.
 */
export async function seedRoleDefinition(
  db: Queryable,
  role: string,
  definition: RoleDefinition,
): Promise<number> {
  const hash = definitionHash(definition);
  await db.query("SELECT pg_advisory_xact_lock(hashtext('role_definitions:' || $1))", [role]);
  const { rows } = await db.query<{ version: number }>(
    `WITH existing AS (
       UPDATE role_definitions SET current_since = clock_timestamp()
       WHERE role = $1 AND content_hash = $2 RETURNING version
     ), added AS (
       INSERT INTO role_definitions (role, version, content_hash, definition)
       SELECT $1, COALESCE((SELECT max(version) FROM role_definitions WHERE role = $1), 0) + 1, $2, $3::jsonb
       WHERE NOT EXISTS (SELECT 1 FROM existing)
       RETURNING version
     )
     SELECT version FROM existing UNION ALL SELECT version FROM added`,
    [role, hash, JSON.stringify(definition)],
  );
  return rows[0]!.version;
}

/**
 * The INSERT that pins every role's current version the session has no pin for yet, the session
 * given as an SQL expression: the launch's single statement runs it (gateway/run-launch.ts).
 */
export function pinSessionDefinitionsSql(session: string): string {
  return `INSERT INTO session_definition_pins (session_id, role, version)
     SELECT DISTINCT ON (role) ${session}, role, version FROM role_definitions
     ORDER BY role, current_since DESC
     ON CONFLICT (session_id, role) DO NOTHING`;
}

/** Pins every role's current version the session has no pin for yet (its first run does this). */
export async function pinSessionDefinitions(db: Queryable, sessionId: string): Promise<void> {
  await db.query(pinSessionDefinitionsSql('$1::uuid'), [sessionId]);
}

/** What a worker's step starts from, read in one statement (`startRunStep`). */
export interface StepStart {
  /** The run's phase and write epoch (0 until a worker took a redelivery over); null: no such run. */
  run: { phase: Phase; epoch: number } | null;
  /** The definition the step runs with; null when the role has no definition at all. */
  pinned: PinnedDefinition | null;
}

/**
 * The start of a worker's step in one statement, on the way to its first model call: the run's
 * phase and write epoch (whether the task is still for a running run, and the fence its writes
 * carry) and the definition the session runs the role with — its pin, or, for a role that had
 * no definition yet when the session's last run launched, the role's current version, used
 * unpinned; the gateway pins it at the session's next launch, so the pins keep one writer. The
 * definition is recorded against the run either way (docs/kernel.md "Definitions and pinning").
 */
export async function startRunStep(
  db: Queryable,
  input: { sessionId: string; runId: string; role: string },
): Promise<StepStart> {
  if (!isUuid(input.sessionId) || !isUuid(input.runId)) return { run: null, pinned: null };
  const { rows } = await db.query<{
    run_phase: Phase | null;
    run_epoch: number;
    version: number | null;
    definition: RoleDefinition | null;
  }>(
    `WITH chosen AS (
       SELECT version, definition FROM (
         SELECT 0 AS rank, d.version, d.definition FROM session_definition_pins p
         JOIN role_definitions d ON d.role = p.role AND d.version = p.version
         WHERE p.session_id = $1 AND p.role = $2
         UNION ALL
         (SELECT 1, version, definition FROM role_definitions WHERE role = $2
          ORDER BY current_since DESC LIMIT 1)
       ) candidates ORDER BY rank LIMIT 1
     ), recorded AS (
       INSERT INTO run_definitions (run_id, role, version)
       SELECT $3::uuid, $2::text, version FROM chosen
       ON CONFLICT (run_id, role) DO NOTHING
     )
     SELECT r.phase AS run_phase,
       COALESCE((SELECT f.epoch FROM run_fences f WHERE f.run_id = $3::uuid), 0) AS run_epoch,
       c.version, c.definition
     FROM (SELECT 1) AS one
     LEFT JOIN runs r ON r.run_id = $3::uuid
     LEFT JOIN chosen c ON true`,
    [input.sessionId, input.role, input.runId],
  );
  const row = rows[0]!;
  return {
    run: row.run_phase === null ? null : { phase: row.run_phase, epoch: Number(row.run_epoch) },
    pinned:
      row.version === null || row.definition === null
        ? null
        : { role: input.role, version: row.version, definition: row.definition },
  };
}

/** role → version a run used. */
export async function listRunDefinitions(db: Queryable, runId: string): Promise<Record<string, number>> {
  if (!isUuid(runId)) return {};
  const { rows } = await db.query<{ role: string; version: number }>(
    'SELECT role, version FROM run_definitions WHERE run_id = $1 ORDER BY role',
    [runId],
  );
  return Object.fromEntries(rows.map((row) => [row.role, row.version]));
}

/** What a session is pinned to, and what a new session would get. */
export async function sessionDefinitions(
  db: Queryable,
  sessionId: string,
): Promise<{ pinned: Record<string, number>; current: Record<string, number> }> {
  const [pinned, current] = await Promise.all([
    db.query<{ role: string; version: number }>(
      'SELECT role, version FROM session_definition_pins WHERE session_id = $1 ORDER BY role',
      [sessionId],
    ),
    db.query<{ role: string; version: number }>(
      `SELECT DISTINCT ON (role) role, version FROM role_definitions ORDER BY role, current_since DESC`,
    ),
  ]);
  return {
    pinned: Object.fromEntries(pinned.rows.map((row) => [row.role, row.version])),
    current: Object.fromEntries(current.rows.map((row) => [row.role, row.version])),
  };
}

/** The explicit upgrade: the session's pins move to the current versions. */
export async function upgradeSessionDefinitions(db: Queryable, sessionId: string): Promise<void> {
  await db.query('DELETE FROM session_definition_pins WHERE session_id = $1', [sessionId]);
  await pinSessionDefinitions(db, sessionId);
}

import { createHash } from 'node:crypto';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Skill versions and pinning (docs/kernel.md "Definitions and pinning"). `skills` and
 * `skill_resources` hold each skill's newest text, the one the author edits and exports; every
 * edit is also a row of `skill_versions`. A session pins a version of each skill at the launch
 * of its first run that sees the skill, and each run records the versions it reads
 * (`run_skill_versions`): the context compiler and the skill tools read through that record.
 */
export interface SkillVersionInput {
  description: string;
  content: string;
  metadata: Record<string, unknown>;
  resources: ReadonlyArray<{ path: string; content: string }>;
}

/** A skill as one run reads it. */
export interface RunSkill {
  id: string;
  name: string;
  description: string;
  version: number;
  content: string;
  metadata: Record<string, unknown>;
  resources: Array<{ path: string; bytes: number }>;
}

/** The hash of a skill package's content: the same package again is the same version. */
export function skillContentHash(input: SkillVersionInput): string {
  const resources = [...input.resources]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((resource) => [resource.path, resource.content]);
  return createHash('sha256')
    .update(JSON.stringify([input.description, input.content, sortedKeys(input.metadata), resources]))
    .digest('hex');
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([key, item]) => [key, sortedKeys(item)]),
    );
  }
  return value;
}

/**
 * Records the skill's saved package as its next version unless its newest version already has
 * this content; the skill row's `version` names the newest. Run in the save's transaction, after
 * the row is locked by its upsert.
 */
export async function recordSkillVersion(
  db: Queryable,
  skillId: string,
  input: SkillVersionInput,
): Promise<number> {
  const hash = skillContentHash(input);
  const latest = await db.query<{ version: number; content_hash: string }>(
    'SELECT version, content_hash FROM skill_versions WHERE skill_id = $1 ORDER BY version DESC LIMIT 1',
    [skillId],
  );
  const newest = latest.rows[0];
  if (newest?.content_hash === hash) return newest.version;
  const version = (newest?.version ?? 0) + 1;
  const resources = [...input.resources]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((resource) => ({ ...resource, bytes: Buffer.byteLength(resource.content) }));
  await db.query(
    `INSERT INTO skill_versions (skill_id, version, content_hash, description, content, metadata, resources)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      skillId,
      version,
      hash,
      input.description,
      input.content,
      JSON.stringify(input.metadata),
      JSON.stringify(resources),
    ],
  );
  await db.query('UPDATE skills SET version = $2 WHERE id = $1', [skillId, version]);
  return version;
}

/**
 * At a run's launch, as CTEs of its single statement (run-launch.ts; `session` and `run` are SQL
 * expressions): pins the newest version of each of the session owner's skills the session has no
 * pin for yet (all of them at its first run), then records the pinned versions of the enabled ones
 * as the run's. The record reads the pins the statement started with plus those it just added:
 * CTEs of one statement do not see each other's rows.
 */
export function pinRunSkillsCtes(session: string, run: string): string {
  return `skill_pins_added AS (
       INSERT INTO session_skill_pins (session_id, skill_id, version)
       SELECT se.session_id, s.id, s.version FROM sessions se JOIN skills s ON s.owner_id = se.user_id
       WHERE se.session_id = ${session}
       ON CONFLICT (session_id, skill_id) DO NOTHING
       RETURNING skill_id, version
     ), run_skills_recorded AS (
       INSERT INTO run_skill_versions (run_id, skill_id, name, version)
       SELECT ${run}, s.id, s.name, p.version FROM (
         SELECT skill_id, version FROM session_skill_pins WHERE session_id = ${session}
         UNION ALL SELECT skill_id, version FROM skill_pins_added
       ) p JOIN skills s ON s.id = p.skill_id
       WHERE s.enabled
       ON CONFLICT (run_id, skill_id) DO NOTHING
     )`;
}

// A run launched before skill versions existed (or made outside the gateway, as unit tests do)
// has no record: it reads the newest enabled versions.
export const RUN_SKILLS_SQL = `WITH recorded AS (SELECT skill_id, version FROM run_skill_versions WHERE run_id = $1)
  SELECT s.id, s.name, v.version, v.description, v.content, v.metadata,
    (SELECT COALESCE(jsonb_agg(jsonb_build_object('path', r->>'path', 'bytes', (r->>'bytes')::int)
                               ORDER BY r->>'path'), '[]'::jsonb)
     FROM jsonb_array_elements(v.resources) r) AS resources
  FROM skills s JOIN skill_versions v ON v.skill_id = s.id
  WHERE s.owner_id = $2 AND CASE WHEN EXISTS (SELECT 1 FROM recorded)
    THEN (s.id, v.version) IN (SELECT skill_id, version FROM recorded)
    ELSE s.enabled AND v.version = s.version END`;

/** The skills a run reads, by name: its L1 catalog (name + purpose). */
export async function listRunSkills(
  db: Queryable,
  input: { runId: string; userId: string },
): Promise<Array<{ name: string; description: string }>> {
  if (!isUuid(input.userId) || !isUuid(input.runId)) return [];
  const { rows } = await db.query<{ name: string; description: string }>(
    `SELECT name, description FROM (${RUN_SKILLS_SQL}) skill ORDER BY name`,
    [input.runId, input.userId],
  );
  return rows;
}

/** One skill as the run reads it, or null when the run has no such skill. */
export async function getRunSkill(
  db: Queryable,
  input: { runId: string; userId: string; name: string },
): Promise<RunSkill | null> {
  if (!isUuid(input.userId) || !isUuid(input.runId)) return null;
  const { rows } = await db.query<RunSkill>(`SELECT * FROM (${RUN_SKILLS_SQL}) skill WHERE name = $3`, [
    input.runId,
    input.userId,
    input.name,
  ]);
  return rows[0] ?? null;
}

/** A resource of one skill version, or null. */
export async function getSkillVersionResource(
  db: Queryable,
  input: { skillId: string; version: number; path: string },
): Promise<string | null> {
  if (!isUuid(input.skillId)) return null;
  const { rows } = await db.query<{ content: string }>(
    `SELECT r->>'content' AS content FROM skill_versions v, jsonb_array_elements(v.resources) r
     WHERE v.skill_id = $1 AND v.version = $2 AND r->>'path' = $3`,
    [input.skillId, input.version, input.path],
  );
  return rows[0]?.content ?? null;
}

/** name → skill version a run read with. */
export async function listRunSkillVersions(db: Queryable, runId: string): Promise<Record<string, number>> {
  if (!isUuid(runId)) return {};
  const { rows } = await db.query<{ name: string; version: number }>(
    'SELECT name, version FROM run_skill_versions WHERE run_id = $1 ORDER BY name',
    [runId],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.version]));
}

/** The skill versions a session is pinned to, and the newest ones (what a new session gets). */
export async function sessionSkillVersions(
  db: Queryable,
  sessionId: string,
): Promise<{ pinned: Record<string, number>; current: Record<string, number> }> {
  const [pinned, current] = await Promise.all([
    db.query<{ name: string; version: number }>(
      `SELECT s.name, p.version FROM session_skill_pins p JOIN skills s ON s.id = p.skill_id
       WHERE p.session_id = $1 ORDER BY s.name`,
      [sessionId],
    ),
    db.query<{ name: string; version: number }>(
      `SELECT s.name, s.version FROM sessions se JOIN skills s ON s.owner_id = se.user_id
       WHERE se.session_id = $1 ORDER BY s.name`,
      [sessionId],
    ),
  ]);
  return {
    pinned: Object.fromEntries(pinned.rows.map((row) => [row.name, row.version])),
    current: Object.fromEntries(current.rows.map((row) => [row.name, row.version])),
  };
}

/** The explicit upgrade: the session's skill pins move to the newest versions (from its next run). */
export async function upgradeSessionSkills(db: Queryable, sessionId: string): Promise<void> {
  await db.query('DELETE FROM session_skill_pins WHERE session_id = $1', [sessionId]);
  await db.query(
    `INSERT INTO session_skill_pins (session_id, skill_id, version)
     SELECT se.session_id, s.id, s.version FROM sessions se JOIN skills s ON s.owner_id = se.user_id
     WHERE se.session_id = $1`,
    [sessionId],
  );
}

import type pg from 'pg';
import { isUuid } from '../ids.ts';
import { type Queryable, withTransaction } from '../pool.ts';
import { recordSkillVersion } from './skill-versions.ts';

/** A user's skill: a standard SKILL.md (front matter name + description, body) with resources. */
export interface SkillSummary {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  resourceCount: number;
  updatedAt: string;
  /** The newest version (docs/kernel.md "Definitions and pinning"); sessions may be pinned to older ones. */
  version: number;
}

export interface Skill extends SkillSummary {
  /** The SKILL.md body (after the front matter). */
  content: string;
  /** The SKILL.md front matter as parsed at import. */
  metadata: Record<string, unknown>;
  resources: Array<{ path: string; bytes: number }>;
}

export interface SkillPackageInput {
  name: string;
  description: string;
  content: string;
  metadata: Record<string, unknown>;
  resources: Array<{ path: string; content: string }>;
}

interface SkillRow {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  resource_count: number;
  updated_at: string;
  version: number;
  content: string;
  metadata: Record<string, unknown>;
}

const SUMMARY_SQL = `SELECT s.id, s.name, s.description, s.enabled, s.updated_at, s.version, s.content, s.metadata,
    (SELECT count(*)::int FROM skill_resources r WHERE r.skill_id = s.id) AS resource_count
  FROM skills s`;

const toSummary = (row: SkillRow): SkillSummary => ({
  id: row.id,
  name: row.name,
  description: row.description,
  enabled: row.enabled,
  resourceCount: row.resource_count,
  updatedAt: row.updated_at,
  version: row.version,
});

/** All of the user's skills, by name. */
export async function listSkills(db: Queryable, userId: string): Promise<SkillSummary[]> {
  if (!isUuid(userId)) return [];
  const { rows } = await db.query<SkillRow>(`${SUMMARY_SQL} WHERE s.owner_id = $1 ORDER BY s.name`, [userId]);
  return rows.map(toSummary);
}

export async function getSkill(
  db: Queryable,
  userId: string,
  name: string,
  options: { enabledOnly?: boolean } = {},
): Promise<Skill | null> {
  if (!isUuid(userId)) return null;
  const { rows } = await db.query<SkillRow>(
    `${SUMMARY_SQL} WHERE s.owner_id = $1 AND s.name = $2 ${options.enabledOnly ? 'AND s.enabled' : ''}`,
    [userId, name],
  );
  const row = rows[0];
  if (!row) return null;
  const resources = await db.query<{ path: string; bytes: number }>(
    'SELECT path, bytes FROM skill_resources WHERE skill_id = $1 ORDER BY path',
    [row.id],
  );
  return { ...toSummary(row), content: row.content, metadata: row.metadata, resources: resources.rows };
}

/** Every resource's content, for export. */
export async function listSkillResourceContents(
  db: Queryable,
  skillId: string,
): Promise<Array<{ path: string; content: string }>> {
  if (!isUuid(skillId)) return [];
  const { rows } = await db.query<{ path: string; content: string }>(
    'SELECT path, content FROM skill_resources WHERE skill_id = $1 ORDER BY path',
    [skillId],
  );
  return rows;
}

/**
 * Imports (or replaces, by name) a skill package; its resources are replaced as a whole. A
 * package whose content differs from the skill's newest version is its next version; the old
 * ones stay for the sessions pinned to them.
 */
export async function saveSkillPackage(
  pool: pg.Pool,
  userId: string,
  input: SkillPackageInput,
): Promise<Skill> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO skills (owner_id, name, description, content, metadata) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (owner_id, name) DO UPDATE SET description = EXCLUDED.description,
         content = EXCLUDED.content, metadata = EXCLUDED.metadata, updated_at = now()
       RETURNING id`,
      [userId, input.name, input.description, input.content, JSON.stringify(input.metadata)],
    );
    const skillId = rows[0]!.id;
    await client.query('DELETE FROM skill_resources WHERE skill_id = $1', [skillId]);
    for (const resource of input.resources) {
      await client.query(
        'INSERT INTO skill_resources (skill_id, path, content, bytes) VALUES ($1, $2, $3, $4)',
        [skillId, resource.path, resource.content, Buffer.byteLength(resource.content)],
      );
    }
    await recordSkillVersion(client, skillId, input);
  });
  return (await getSkill(pool, userId, input.name))!;
}

export async function setSkillEnabled(
  db: Queryable,
  userId: string,
  name: string,
  enabled: boolean,
): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const { rowCount } = await db.query(
    'UPDATE skills SET enabled = $3, updated_at = now() WHERE owner_id = $1 AND name = $2',
    [userId, name, enabled],
  );
  return rowCount === 1;
}

export async function deleteSkill(db: Queryable, userId: string, name: string): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const { rowCount } = await db.query('DELETE FROM skills WHERE owner_id = $1 AND name = $2', [userId, name]);
  return rowCount === 1;
}

export type SkillReadOutcome =
  | { ok: true; usedTokens: number; skills: string[] }
  | { ok: false; reason: 'token_budget' | 'skill_limit'; usedTokens: number; skills: string[] };

/**
 * Charges `tokens` of skill text to the run when the per-request budget and the distinct-skill
 * cap allow it. The check and the insert run under a per-run advisory lock, so two replicas
 * serving steps of one run cannot both squeeze under the limit.
 */
export async function recordSkillRead(
  pool: pg.Pool,
  input: {
    runId: string;
    skillName: string;
    path: string;
    tokens: number;
    tokenBudget: number;
    maxSkills: number;
  },
): Promise<SkillReadOutcome> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`skill_reads:${input.runId}`]);
    const { rows } = await client.query<{ used: number; skills: string[] }>(
      `SELECT coalesce(sum(tokens), 0)::int AS used,
              coalesce(array_agg(DISTINCT skill_name) FILTER (WHERE skill_name IS NOT NULL), '{}') AS skills
       FROM skill_reads WHERE run_id = $1`,
      [input.runId],
    );
    const used = rows[0]?.used ?? 0;
    const skills = rows[0]?.skills ?? [];
    if (!skills.includes(input.skillName) && skills.length >= input.maxSkills) {
      return { ok: false, reason: 'skill_limit', usedTokens: used, skills };
    }
    if (used + input.tokens > input.tokenBudget) {
      return { ok: false, reason: 'token_budget', usedTokens: used, skills };
    }
    await client.query('INSERT INTO skill_reads (run_id, skill_name, path, tokens) VALUES ($1, $2, $3, $4)', [
      input.runId,
      input.skillName,
      input.path,
      input.tokens,
    ]);
    const after = skills.includes(input.skillName) ? skills : [...skills, input.skillName];
    return { ok: true, usedTokens: used + input.tokens, skills: after };
  });
}

/** What the run has read so far (tokens and distinct skills). */
export async function skillReadUsage(
  db: Queryable,
  runId: string,
): Promise<{ usedTokens: number; skills: string[] }> {
  if (!isUuid(runId)) return { usedTokens: 0, skills: [] };
  const { rows } = await db.query<{ used: number; skills: string[] }>(
    `SELECT coalesce(sum(tokens), 0)::int AS used, coalesce(array_agg(DISTINCT skill_name), '{}') AS skills
     FROM skill_reads WHERE run_id = $1`,
    [runId],
  );
  return { usedTokens: rows[0]?.used ?? 0, skills: rows[0]?.skills ?? [] };
}

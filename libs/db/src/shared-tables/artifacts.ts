import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Artifacts (docs/kernel.md "Artifacts and acceptance"): every text the agent writes into a
 * file is one artifact version with a state. The text lives either in the file itself
 * (`in_file`, the file's version `version`) or in a `（AI 草稿）` file next to it (`draft`, the
 * AI-draft path of docs/ai-writes.md). This module records and reads them; the decisions
 * (accept, reject, request a revision) are in artifact-decisions.ts.
 */
export type ArtifactState =
  | 'drafted'
  | 'under_review'
  | 'accepted'
  | 'rejected'
  | 'revision_requested'
  /** Sent back for a revision, and the revision that answered it was accepted. */
  | 'superseded';
export type ArtifactPlacement = 'in_file' | 'draft';
export type ArtifactAcceptance = 'auto' | 'review';

/** States in which an artifact is not yet the fact: the compiler labels its text a draft. */
export const OPEN_ARTIFACT_STATES: readonly ArtifactState[] = [
  'drafted',
  'under_review',
  'revision_requested',
];

export interface ArtifactFinding {
  run_id: string;
  step: number;
  role: string;
  text: string;
  at: string;
}

export interface Artifact {
  id: string;
  projectId: string;
  runId: string | null;
  step: number | null;
  fileId: string | null;
  textFileId: string;
  placement: ArtifactPlacement;
  version: number;
  baseVersion: number | null;
  state: ArtifactState;
  decidedBy: string | null;
  comment: string | null;
  findings: ArtifactFinding[];
  revisionRunId: string | null;
  createdAt: string;
  decidedAt: string | null;
}

interface ArtifactRow {
  id: string;
  project_id: string;
  run_id: string | null;
  step: number | null;
  file_id: string | null;
  text_file_id: string;
  placement: ArtifactPlacement;
  version: number;
  base_version: number | null;
  state: ArtifactState;
  decided_by: string | null;
  comment: string | null;
  findings: ArtifactFinding[];
  revision_run_id: string | null;
  created_at: string;
  decided_at: string | null;
}

export const ARTIFACT_COLUMNS =
  'a.id, a.project_id, a.run_id, a.step, a.file_id, a.text_file_id, a.placement, a.version, a.base_version, a.state, a.decided_by, a.comment, a.findings, a.revision_run_id, a.created_at, a.decided_at';

export function toArtifact(row: ArtifactRow): Artifact {
  return {
    id: row.id,
    projectId: row.project_id,
    runId: row.run_id,
    step: row.step,
    fileId: row.file_id,
    textFileId: row.text_file_id,
    placement: row.placement,
    version: row.version,
    baseVersion: row.base_version,
    state: row.state,
    decidedBy: row.decided_by,
    comment: row.comment,
    findings: row.findings,
    revisionRunId: row.revision_run_id,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
  };
}

/** The step a write key names (`<run>:s<step>:…`, see docs/ai-writes.md rule 5), or null. */
export function stepOfWriteKey(writeKey: string | undefined | null): number | null {
  const match = writeKey ? /:s(\d+):/.exec(writeKey) : null;
  return match ? Number(match[1]) : null;
}

export interface AiArtifactInput {
  projectId: string;
  /** Null for a draft that came in with an imported project. */
  runId: string | null;
  writeKey?: string | undefined;
  fileId: string | null;
  textFileId: string;
  placement: ArtifactPlacement;
  version: number;
  baseVersion: number | null;
}

/**
 * Records the artifact of an AI write. A draft next to a file always waits for the author (as AI
 * drafts always have); an in-file write waits only when the project reviews artifacts, and is
 * otherwise accepted as it is saved. Written in the write's own transaction, so a redelivered
 * step that finds its write by key finds its artifact too; idempotent per write key.
 */
export async function recordAiArtifact(db: Queryable, input: AiArtifactInput): Promise<void> {
  await db.query(
    `INSERT INTO artifacts (project_id, run_id, step, file_id, text_file_id, placement, version,
                            base_version, state, decided_by, decided_at, write_key)
     SELECT p.id, $2::uuid, $3, $4::uuid, $5::uuid, $6, $7, $8,
            CASE WHEN $6 = 'in_file' AND p.artifact_acceptance = 'auto' THEN 'accepted' ELSE 'drafted' END,
            CASE WHEN $6 = 'in_file' AND p.artifact_acceptance = 'auto' THEN 'auto' END,
            CASE WHEN $6 = 'in_file' AND p.artifact_acceptance = 'auto' THEN now() END,
            $9
     FROM projects p WHERE p.id = $1
     ON CONFLICT (write_key) WHERE write_key IS NOT NULL DO NOTHING`,
    [
      input.projectId,
      input.runId,
      stepOfWriteKey(input.writeKey),
      input.fileId,
      input.textFileId,
      input.placement,
      input.version,
      input.baseVersion,
      input.writeKey ?? null,
    ],
  );
}

export async function getArtifact(
  db: Queryable,
  projectId: string,
  artifactId: string,
): Promise<Artifact | null> {
  if (!isUuid(projectId) || !isUuid(artifactId)) return null;
  const { rows } = await db.query<ArtifactRow>(
    `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a WHERE a.project_id = $1 AND a.id = $2`,
    [projectId, artifactId],
  );
  return rows[0] ? toArtifact(rows[0]) : null;
}

/** The artifact whose text is the given draft file (what accept-draft accepts). */
export async function findDraftArtifact(db: Queryable, draftFileId: string): Promise<Artifact | null> {
  if (!isUuid(draftFileId)) return null;
  const { rows } = await db.query<ArtifactRow>(
    `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a
     WHERE a.text_file_id = $1 AND a.placement = 'draft' ORDER BY a.created_at DESC LIMIT 1`,
    [draftFileId],
  );
  return rows[0] ? toArtifact(rows[0]) : null;
}

/** A project's or a run's artifacts, newest first, optionally only open ones. */
export async function listArtifacts(
  db: Queryable,
  filter: { projectId?: string; runId?: string; openOnly?: boolean; limit?: number },
): Promise<Artifact[]> {
  const id = filter.runId ?? filter.projectId;
  if (!id || !isUuid(id)) return [];
  const column = filter.runId ? 'a.run_id' : 'a.project_id';
  const { rows } = await db.query<ArtifactRow>(
    `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a
     WHERE ${column} = $1 AND (NOT $2 OR a.state = ANY($3::text[]))
     ORDER BY a.created_at DESC LIMIT $4`,
    [id, filter.openOnly ?? false, OPEN_ARTIFACT_STATES, filter.limit ?? 200],
  );
  return rows.map(toArtifact);
}

/**
 * Whether the run ended with artifacts waiting for the author: the data a session's
 * `waiting_user` on pending acceptance is decided from (the router owns the phase write).
 */
export async function runAwaitsAcceptance(db: Queryable, runId: string): Promise<boolean> {
  if (!isUuid(runId)) return false;
  const { rows } = await db.query(
    'SELECT 1 FROM artifacts WHERE run_id = $1 AND state = ANY($2::text[]) LIMIT 1',
    [runId, OPEN_ARTIFACT_STATES],
  );
  return rows.length > 0;
}

/**
 * Whether any run of the session left AI output the author has not decided on yet, as an SQL
 * condition on the session id and the open states (a parameter holding OPEN_ARTIFACT_STATES).
 */
export function sessionAwaitsAcceptanceSql(values: { session: string; openStates: string }): string {
  return `EXISTS (SELECT 1 FROM artifacts a JOIN runs r ON r.run_id = a.run_id
     WHERE r.session_id = ${values.session} AND a.state = ANY(${values.openStates}::text[]))`;
}

/** Whether any run of the session left AI output the author has not decided on yet. */
export async function sessionAwaitsAcceptance(db: Queryable, sessionId: string): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const { rows } = await db.query<{ awaits: boolean }>(
    `SELECT ${sessionAwaitsAcceptanceSql({ session: '$1', openStates: '$2' })} AS awaits`,
    [sessionId, OPEN_ARTIFACT_STATES],
  );
  return rows[0]?.awaits === true;
}

/**
 * Attaches a reviewer step's findings to the artifacts it judged: the run's artifacts written
 * before that step. An artifact still `drafted` moves to `under_review` (decided, by the author,
 * later). Idempotent per (run, step): a router taking the run over attaches nothing twice.
 */
export async function attachReviewFindings(
  db: Queryable,
  input: { runId: string; step: number; role: string; text: string },
): Promise<number> {
  if (!isUuid(input.runId) || input.text.trim() === '') return 0;
  const finding = { run_id: input.runId, step: input.step, role: input.role, text: input.text };
  const { rowCount } = await db.query(
    `UPDATE artifacts SET
       findings = findings || jsonb_build_array($3::jsonb || jsonb_build_object('at', now())),
       state = CASE WHEN state = 'drafted' THEN 'under_review' ELSE state END
     WHERE run_id = $1 AND step < $2
       AND NOT findings @> jsonb_build_array(jsonb_build_object('run_id', $1::text, 'step', $2::int))`,
    [input.runId, input.step, JSON.stringify(finding)],
  );
  return rowCount ?? 0;
}

/** The project's acceptance setting (`auto` for a project that does not exist: nothing waits). */
export async function getArtifactAcceptance(db: Queryable, projectId: string): Promise<ArtifactAcceptance> {
  if (!isUuid(projectId)) return 'auto';
  const { rows } = await db.query<{ artifact_acceptance: ArtifactAcceptance }>(
    'SELECT artifact_acceptance FROM projects WHERE id = $1',
    [projectId],
  );
  return rows[0]?.artifact_acceptance ?? 'auto';
}

export async function setArtifactAcceptance(
  db: Queryable,
  projectId: string,
  acceptance: ArtifactAcceptance,
): Promise<void> {
  await db.query('UPDATE projects SET artifact_acceptance = $2, updated_at = now() WHERE id = $1', [
    projectId,
    acceptance,
  ]);
}

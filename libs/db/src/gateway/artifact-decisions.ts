import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import {
  ARTIFACT_COLUMNS,
  type Artifact,
  type ArtifactState,
  OPEN_ARTIFACT_STATES,
  toArtifact,
} from '../shared-tables/artifacts.ts';
import { saveFileContentIfVersion } from '../shared-tables/file-edits.ts';
import {
  FILE_COLUMNS,
  type FileRow,
  getFileVersion,
  type ProjectFile,
  softDeleteFile,
  toFile,
} from '../shared-tables/files.ts';

/**
 * The author's decisions on an artifact (docs/kernel.md "Artifacts and acceptance"). Each one
 * is a compare-and-set like every AI write (docs/ai-writes.md): it acts only while the text it
 * judges is still where the artifact says, so accepting or rejecting never overwrites a save
 * the author made meanwhile. Run each inside one transaction.
 */
export type ArtifactDecision =
  | { kind: 'decided'; artifact: Artifact; file: ProjectFile | null }
  | { kind: 'not_found' }
  | { kind: 'not_open'; artifact: Artifact }
  /** The file moved on since the artifact (or since the version the author named). */
  | { kind: 'conflict'; artifact: Artifact; currentVersion: number | null }
  /** Accepting a draft replaces the original: the author must name the version they saw. */
  | { kind: 'expected_version_required'; artifact: Artifact };

interface DecisionInput {
  projectId: string;
  artifactId: string;
  userId: string;
}

/** Accepting makes the artifact's text the file's current text, as the author's own version. */
export async function acceptArtifact(
  db: Queryable,
  input: DecisionInput & { expectedVersion?: number | undefined },
): Promise<ArtifactDecision> {
  const artifact = await lockArtifact(db, input.projectId, input.artifactId);
  if (!artifact) return { kind: 'not_found' };
  if (!OPEN_ARTIFACT_STATES.includes(artifact.state)) return { kind: 'not_open', artifact };
  const text = await lockAnyFile(db, artifact.textFileId);
  // A draft file is the artifact's own text (the author may have touched it up before
  // accepting); an in-file artifact must still be what its file holds.
  const moved = artifact.placement === 'in_file' && text?.version !== artifact.version;
  if (!text || text.deleted || moved) {
    return { kind: 'conflict', artifact, currentVersion: text?.version ?? null };
  }
  if (artifact.placement === 'in_file') {
    if (input.expectedVersion !== undefined && input.expectedVersion !== text.version) {
      return { kind: 'conflict', artifact, currentVersion: text.version };
    }
    const decided = await decide(db, artifact.id, 'accepted', input.userId);
    await supersedeSentBack(db, decided, input.userId);
    return { kind: 'decided', artifact: decided, file: text };
  }
  const original = artifact.fileId ? await lockAnyFile(db, artifact.fileId) : null;
  if (!original || original.deleted) {
    // The original is gone: the draft is all there is, so it becomes a file of its own.
    await db.query('UPDATE files SET draft_of = NULL, updated_at = now() WHERE id = $1', [text.id]);
    const decided = await decide(db, artifact.id, 'accepted', input.userId);
    await supersedeSentBack(db, decided, input.userId);
    return { kind: 'decided', artifact: decided, file: { ...text, draftOf: null } };
  }
  if (input.expectedVersion === undefined) return { kind: 'expected_version_required', artifact };
  const saved = await saveFileContentIfVersion(db, {
    projectId: input.projectId,
    fileId: original.id,
    content: text.content,
    expectedVersion: input.expectedVersion,
    source: 'author',
  });
  if (saved === null) return { kind: 'conflict', artifact, currentVersion: original.version };
  await softDeleteFile(db, input.projectId, text.id);
  const decided = await decide(db, artifact.id, 'accepted', input.userId);
  await supersedeSentBack(db, decided, input.userId);
  return { kind: 'decided', artifact: decided, file: await lockAnyFile(db, original.id) };
}

/**
 * Rejecting restores the text the file had before: an in-file artifact's file gets its base
 * version's text back as a new version (history keeps the rejected one); a draft is removed and
 * the original, never touched, stays as it is.
 */
export async function rejectArtifact(
  db: Queryable,
  input: DecisionInput & { comment?: string },
): Promise<ArtifactDecision> {
  const artifact = await lockArtifact(db, input.projectId, input.artifactId);
  if (!artifact) return { kind: 'not_found' };
  if (!OPEN_ARTIFACT_STATES.includes(artifact.state)) return { kind: 'not_open', artifact };
  const text = await lockAnyFile(db, artifact.textFileId);
  if (artifact.placement === 'draft') {
    if (text && !text.deleted) await softDeleteFile(db, input.projectId, text.id);
    const decided = await decide(db, artifact.id, 'rejected', input.userId, input.comment);
    const original = artifact.fileId ? await lockAnyFile(db, artifact.fileId) : null;
    return { kind: 'decided', artifact: decided, file: original };
  }
  if (!text || text.deleted || text.version !== artifact.version) {
    return { kind: 'conflict', artifact, currentVersion: text?.version ?? null };
  }
  const base = artifact.baseVersion ?? 0;
  const previous = base === 0 ? '' : ((await getFileVersion(db, text.id, base))?.content ?? null);
  if (previous === null) return { kind: 'conflict', artifact, currentVersion: text.version };
  const restored = await saveFileContentIfVersion(db, {
    projectId: input.projectId,
    fileId: text.id,
    content: previous,
    expectedVersion: text.version,
    source: 'author',
  });
  if (restored === null) return { kind: 'conflict', artifact, currentVersion: text.version };
  // The restored text may itself be an open artifact (an earlier AI write): it is again what the
  // file holds, so it is labelled a draft again, at the version that now holds it.
  await db.query(
    `UPDATE artifacts SET version = $3
     WHERE text_file_id = $1 AND placement = 'in_file' AND version = $2 AND state = ANY($4::text[])`,
    [text.id, base, restored, OPEN_ARTIFACT_STATES],
  );
  const decided = await decide(db, artifact.id, 'rejected', input.userId, input.comment);
  return { kind: 'decided', artifact: decided, file: await lockAnyFile(db, text.id) };
}

/**
 * Requesting a revision records the author's comment; the caller starts the revision run and
 * links it with linkRevisionRun. The text stays (as a draft) until a new version replaces it.
 */
export async function requestArtifactRevision(
  db: Queryable,
  input: DecisionInput & { comment: string },
): Promise<ArtifactDecision> {
  const artifact = await lockArtifact(db, input.projectId, input.artifactId);
  if (!artifact) return { kind: 'not_found' };
  if (!OPEN_ARTIFACT_STATES.includes(artifact.state)) return { kind: 'not_open', artifact };
  const decided = await decide(db, artifact.id, 'revision_requested', input.userId, input.comment);
  const file = await lockAnyFile(db, artifact.fileId ?? artifact.textFileId);
  return { kind: 'decided', artifact: decided, file };
}

/** Puts an artifact back as it was before a decision whose follow-up failed (a refused run start). */
export async function undoArtifactDecision(db: Queryable, before: Artifact): Promise<void> {
  await db.query(
    `UPDATE artifacts SET state = $2, comment = $3, decided_by = $4, decided_at = $5::timestamptz,
       decided_by_user = CASE WHEN $4::text IS NULL THEN NULL ELSE decided_by_user END
     WHERE id = $1`,
    [before.id, before.state, before.comment, before.decidedBy, before.decidedAt],
  );
}

export async function linkRevisionRun(db: Queryable, artifactId: string, runId: string): Promise<void> {
  await db.query('UPDATE artifacts SET revision_run_id = $2 WHERE id = $1', [artifactId, runId]);
}

/**
 * Accepting a revision closes what it answered: the artifacts of the same file that the author
 * sent back to the run that wrote it. Their text is no longer the file's, so left
 * `revision_requested` they would keep the session waiting for a decision nobody can make.
 */
async function supersedeSentBack(db: Queryable, accepted: Artifact, userId: string): Promise<void> {
  if (!accepted.runId) return;
  await db.query(
    `UPDATE artifacts SET state = 'superseded', decided_by = 'author', decided_by_user = $4::uuid,
       decided_at = now()
     WHERE project_id = $1 AND revision_run_id = $2 AND state = 'revision_requested'
       AND (file_id = $3 OR text_file_id = $3)`,
    [accepted.projectId, accepted.runId, accepted.fileId ?? accepted.textFileId, userId],
  );
}

async function decide(
  db: Queryable,
  artifactId: string,
  state: ArtifactState,
  userId: string,
  comment?: string,
): Promise<Artifact> {
  const { rows } = await db.query(
    `UPDATE artifacts a SET state = $2, decided_by = 'author', decided_by_user = $3::uuid,
       decided_at = now(), comment = COALESCE($4, a.comment)
     WHERE a.id = $1 RETURNING ${ARTIFACT_COLUMNS}`,
    [artifactId, state, userId, comment ?? null],
  );
  return toArtifact(rows[0]);
}

async function lockArtifact(db: Queryable, projectId: string, artifactId: string): Promise<Artifact | null> {
  if (!isUuid(projectId) || !isUuid(artifactId)) return null;
  const { rows } = await db.query(
    `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a WHERE a.project_id = $1 AND a.id = $2 FOR UPDATE`,
    [projectId, artifactId],
  );
  return rows[0] ? toArtifact(rows[0]) : null;
}

async function lockAnyFile(db: Queryable, fileId: string): Promise<ProjectFile | null> {
  const { rows } = await db.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM files f WHERE f.id = $1 FOR UPDATE`, [
    fileId,
  ]);
  return rows[0] ? toFile(rows[0]) : null;
}

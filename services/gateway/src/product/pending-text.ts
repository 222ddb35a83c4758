import { type Artifact, fileTextAt, listArtifacts, type ProjectFile, type Queryable } from '@quill/db';

/**
 * Which files of a project hold AI text the author has not accepted yet (docs/kernel.md
 * "Artifacts and acceptance"), for the export and the manuscript: a draft file with an open
 * artifact, or a file still at the version an open in-file artifact wrote (once the author saves
 * over it, the author's text is the fact again — the context compiler's rule).
 */
export type PendingState = 'drafted' | 'under_review' | 'revision_requested';
export interface PendingText {
  state: PendingState;
  /** The text that stood before the open AI writes; null when there is none (a new or draft file). */
  acceptedText: string | null;
}

export async function pendingTexts(
  db: Queryable,
  projectId: string,
  files: readonly ProjectFile[],
): Promise<Map<string, PendingText>> {
  const open = await listArtifacts(db, { projectId, openOnly: true });
  const pending = new Map<string, PendingText>();
  for (const file of files) {
    const mine = open.filter((artifact) => artifact.textFileId === file.id);
    const current = mine.find(
      (artifact) => artifact.placement === 'draft' || artifact.version === file.version,
    );
    if (!current) continue;
    const state = current.state as PendingState;
    if (current.placement === 'draft') {
      pending.set(file.id, { state, acceptedText: null });
      continue;
    }
    const base = acceptedBase(current, mine);
    const text = base === null || base === 0 ? null : await fileTextAt(db, file.id, base);
    pending.set(file.id, { state, acceptedText: text === '' ? null : text });
  }
  return pending;
}

/** Back through open in-file artifacts of the same file to the version before them. */
function acceptedBase(current: Artifact, open: readonly Artifact[]): number | null {
  let version = current.baseVersion;
  const seen = new Set<string>([current.id]);
  for (;;) {
    const earlier = open.find(
      (artifact) =>
        artifact.placement === 'in_file' && artifact.version === version && !seen.has(artifact.id),
    );
    if (!earlier) return version;
    seen.add(earlier.id);
    version = earlier.baseVersion;
  }
}

/** The files as an export shows them: unaccepted AI text labelled, or (accepted only) left out. */
export function exportedFiles(
  files: readonly ProjectFile[],
  pending: ReadonlyMap<string, PendingText>,
  acceptedOnly: boolean,
): Array<ProjectFile & { acceptance?: PendingState }> {
  if (!acceptedOnly) {
    return files.map((file) => {
      const mark = pending.get(file.id);
      return mark ? { ...file, acceptance: mark.state } : file;
    });
  }
  return files.flatMap((file) => {
    const mark = pending.get(file.id);
    if (!mark) return file.draftOf === null ? [file] : [];
    return mark.acceptedText === null || file.draftOf !== null
      ? []
      : [{ ...file, content: mark.acceptedText }];
  });
}

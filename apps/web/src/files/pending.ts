import type { Artifact, ProjectFile } from '../api/types.ts';

/**
 * Which AI text is not accepted yet (docs/kernel.md "Artifacts and acceptance"): a draft file with
 * an open artifact, or a file still at the version an open in-file artifact wrote — once the
 * author saves over it, the author's text is the fact again (the context compiler's rule).
 */
export function pendingArtifactOf(
  file: Pick<ProjectFile, 'id' | 'version'>,
  open: readonly Artifact[],
): Artifact | undefined {
  return open.find(
    (artifact) =>
      artifact.text_file_id === file.id &&
      (artifact.placement === 'draft' || artifact.version === file.version),
  );
}

/** The version the accepted text is at: back through open in-file artifacts of the same file. */
export function acceptedVersionOf(artifact: Artifact, open: readonly Artifact[]): number {
  let version = artifact.base_version ?? 0;
  const seen = new Set([artifact.id]);
  for (;;) {
    const earlier = open.find(
      (other) =>
        other.placement === 'in_file' &&
        other.text_file_id === artifact.text_file_id &&
        other.version === version &&
        !seen.has(other.id),
    );
    if (!earlier) return version;
    seen.add(earlier.id);
    version = earlier.base_version ?? 0;
  }
}

import { useEffect, useState } from 'react';
import type { Api } from '../api/api.ts';
import type { Artifact, ProjectFile } from '../api/types.ts';
import { useT } from '../i18n.tsx';
import { DiffView } from './diff-view.tsx';
import { diffLines } from './line-diff.ts';
import { acceptedVersionOf } from './pending.ts';

/** No accepted text yet (a file the agent created): every line of the draft is new. */
const artifactDiff = (accepted: string, draft: string) =>
  accepted === ''
    ? draft.split('\n').map((text) => ({ kind: 'mine' as const, text }))
    : diffLines(accepted, draft);

interface Props {
  api: Api;
  projectId: string;
  /** The file whose text is the artifact (the draft file for a draft). */
  file: ProjectFile;
  artifact: Artifact;
  open: readonly Artifact[];
  busy: boolean;
  onAccept(): void;
  onReject(): void;
  onRevise(comment: string): void;
}

/**
 * An AI text the author has not accepted (README "Runtime kernel"): labelled a draft, shown
 * against the accepted text, with the reviewer's findings, and the author's three decisions. A
 * revision carries a comment and starts a revision run, which streams in the chat.
 */
export function ArtifactPanel({
  api,
  projectId,
  file,
  artifact,
  open,
  busy,
  onAccept,
  onReject,
  onRevise,
}: Props) {
  const t = useT();
  const [accepted, setAccepted] = useState<string>();
  const [comment, setComment] = useState('');
  const label = {
    drafted: t.artifactDrafted,
    under_review: t.artifactUnderReview,
    revision_requested: t.artifactRevisionRequested,
    accepted: '',
    rejected: '',
    superseded: '',
  }[artifact.state];

  // The accepted text: for a draft, what its original holds; in a file, the version before the
  // open AI writes (a file the agent created starts empty).
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the file or its artifact moves on
  useEffect(() => {
    let live = true;
    const load = async () => {
      if (artifact.placement === 'draft') {
        if (!artifact.file_id) return '';
        return (await api.files.get(projectId, artifact.file_id)).file.content ?? '';
      }
      const version = acceptedVersionOf(artifact, open);
      if (version === 0) return '';
      return (await api.files.version(projectId, file.id, version)).version.content;
    };
    load()
      .then((text) => live && setAccepted(text))
      .catch(() => live && setAccepted(''));
    return () => {
      live = false;
    };
  }, [api, projectId, file.id, file.version, artifact.id, artifact.state]);

  return (
    <section className="artifact" aria-label={label} data-testid="artifact-panel" data-state={artifact.state}>
      <div className="banner draft" data-testid="artifact-label">
        {label}
        {artifact.comment && <span className="hint"> · {artifact.comment}</span>}
      </div>
      {accepted !== undefined && (
        <figure className="diff">
          <figcaption>{t.artifactDiff}</figcaption>
          <DiffView testId="artifact-diff" lines={artifactDiff(accepted, file.content ?? '')} />
        </figure>
      )}
      <div className="findings">
        <h3>{t.findings}</h3>
        {artifact.findings.length === 0 ? (
          <p className="hint">{t.noFindings}</p>
        ) : (
          <ul>
            {artifact.findings.map((finding) => (
              <li key={`${finding.at}-${finding.role}`} data-testid="artifact-finding">
                <span className="badge">{finding.role}</span> {finding.text}
              </li>
            ))}
          </ul>
        )}
      </div>
      <div className="artifact-actions">
        <button type="button" disabled={busy} onClick={onAccept} data-testid="artifact-accept">
          {t.accept}
        </button>
        <button type="button" disabled={busy} onClick={onReject} data-testid="artifact-reject">
          {t.reject}
        </button>
        <textarea
          data-testid="revision-comment"
          aria-label={t.revisionComment}
          placeholder={t.revisionComment}
          value={comment}
          onChange={(event) => setComment(event.target.value)}
        />
        <button
          type="button"
          disabled={busy || comment.trim() === ''}
          onClick={() => {
            onRevise(comment.trim());
            setComment('');
          }}
          data-testid="artifact-revise"
        >
          {t.requestRevision}
        </button>
      </div>
    </section>
  );
}

import { useCallback, useEffect, useRef, useState } from 'react';
import { type Api, QuillApiError } from '../api/api.ts';
import { explainError } from '../api/errors.ts';
import type { Artifact, ProjectFile } from '../api/types.ts';
import type { StreamingFile } from '../chat/run-view.ts';
import { useT } from '../i18n.tsx';
import { ArtifactPanel } from './artifact-panel.tsx';
import { ConflictView } from './conflict-view.tsx';
import { pendingArtifactOf } from './pending.ts';
import { VersionsPanel } from './versions-panel.tsx';

interface Props {
  api: Api;
  projectId: string;
  fileId: string;
  /** The same file's body while the agent writes it (file_start / file_delta frames). */
  streaming: StreamingFile | undefined;
  /** Bumped when a run saved files, so a clean editor shows the new text. */
  refreshToken: number;
  files: ProjectFile[];
  /** The project's open artifacts: this file's text may be one (not accepted yet). */
  artifacts: readonly Artifact[];
  /** Request a revision: starts a revision run, which the chat streams. */
  onRevise(artifactId: string, comment: string): Promise<void>;
  onChanged(): void;
  onDirtyChange(dirty: boolean): void;
}

type Conflict = { theirs: ProjectFile; mine: string; mineVersion: number };

/**
 * The selected file: its text, saved with expected_version (README "HTTP API": a stale one is
 * 409 version_conflict, shown as a choice, never a silent overwrite); AI drafts can be accepted.
 */
export function Editor({
  api,
  projectId,
  fileId,
  streaming,
  refreshToken,
  files,
  artifacts,
  onRevise,
  onChanged,
  onDirtyChange,
}: Props) {
  const t = useT();
  const [file, setFile] = useState<ProjectFile>();
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string>();
  const [conflict, setConflict] = useState<Conflict>();
  const dirty = file !== undefined && text !== file.content;
  // Read when a reload answers: the author may have started typing while it was on its way.
  const dirtyNow = useRef(dirty);
  dirtyNow.current = dirty;

  const show = useCallback((loaded: ProjectFile) => {
    setFile(loaded);
    setText(loaded.content ?? '');
  }, []);

  // A reload never replaces text the author has not saved: not when it starts, and not when it
  // answers after the author started typing (their save then meets the newer version as a
  // conflict, shown as a choice).
  // biome-ignore lint/correctness/useExhaustiveDependencies: reload on a run's save, unless edited
  useEffect(() => {
    if (dirty) return;
    let live = true;
    api.files
      .get(projectId, fileId)
      .then((answer) => {
        if (live && !dirtyNow.current) show(answer.file);
      })
      .catch((error) => live && setStatus(explainError(t, error)));
    return () => {
      live = false;
    };
  }, [api, projectId, fileId, refreshToken, show]);

  useEffect(() => onDirtyChange(dirty), [dirty, onDirtyChange]);
  // "Revision requested" holds until the revision's text arrives as a new version.
  // biome-ignore lint/correctness/useExhaustiveDependencies: cleared when the file's version moves on
  useEffect(() => {
    setStatus((current) => (current === t.revisionStarted ? undefined : current));
  }, [file?.version, t.revisionStarted]);

  const run = async (action: () => Promise<ProjectFile>) => {
    setBusy(true);
    setStatus(t.saving);
    try {
      show(await action());
      setStatus(t.saved);
      onChanged();
    } catch (error) {
      if (error instanceof QuillApiError && error.code === 'version_conflict' && file) {
        const theirs = (await api.files.get(projectId, fileId)).file;
        setConflict({ theirs, mine: text, mineVersion: file.version });
        setStatus(undefined);
      } else setStatus(explainError(t, error));
    } finally {
      setBusy(false);
    }
  };

  if (!file) return <p className="hint">{status ?? '…'}</p>;
  const writing = streaming !== undefined && !streaming.done;
  const original = file.draft_of ? files.find((candidate) => candidate.id === file.draft_of) : undefined;
  const save = () => void run(async () => (await api.files.save(projectId, fileId, text, file.version)).file);
  const pending = writing ? undefined : pendingArtifactOf(file, artifacts);
  // A decision changes the file (reject restores the accepted text): show it as it stands then.
  const decide = (action: () => Promise<unknown>) =>
    void run(async () => {
      await action();
      return (await api.files.get(projectId, fileId)).file;
    });

  return (
    <section className="editor" aria-label={file.title}>
      <header className="editor-head">
        <h2>{file.title}</h2>
        <span className="hint">
          {t.version} {file.version}
        </span>
        {dirty && <span className="badge">{t.unsaved}</span>}
        {status && (
          <span className="hint" role="status" data-testid="editor-status">
            {status}
          </span>
        )}
        <button type="button" onClick={save} disabled={busy || writing || !dirty} data-testid="save">
          {t.save}
        </button>
      </header>
      {file.draft_of && (
        <div className="banner draft" data-testid="draft-banner">
          {t.draftBanner} {original && `《${original.title}》`}
          {original && (
            <button
              type="button"
              onClick={() =>
                void run(async () => (await api.files.acceptDraft(projectId, fileId, original.version)).file)
              }
            >
              {t.acceptDraft}
            </button>
          )}
        </div>
      )}
      {writing && <div className="banner writing">{t.aiWriting}</div>}
      {pending && !dirty && (
        <ArtifactPanel
          api={api}
          projectId={projectId}
          file={file}
          artifact={pending}
          open={artifacts}
          busy={busy}
          onAccept={() =>
            decide(() =>
              api.artifacts.accept(
                projectId,
                pending.id,
                pending.placement === 'draft' ? original?.version : undefined,
              ),
            )
          }
          onReject={() => decide(() => api.artifacts.reject(projectId, pending.id))}
          onRevise={(comment) => {
            setStatus(t.revisionStarted);
            void onRevise(pending.id, comment).catch((error) => setStatus(explainError(t, error)));
          }}
        />
      )}
      {conflict ? (
        <ConflictView
          {...conflict}
          onKeepMine={() => {
            const { mine, theirs } = conflict;
            setConflict(undefined);
            void run(async () => (await api.files.save(projectId, fileId, mine, theirs.version)).file);
          }}
          onTakeTheirs={() => {
            show(conflict.theirs);
            setConflict(undefined);
          }}
        />
      ) : (
        <textarea
          className="editor-text"
          data-testid="editor-text"
          value={writing ? streaming.content : text}
          readOnly={writing}
          aria-label={file.title}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 's' && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              if (dirty && !busy) save();
            }
          }}
        />
      )}
      <VersionsPanel
        api={api}
        projectId={projectId}
        fileId={fileId}
        currentVersion={file.version}
        currentText={file.content ?? ''}
        onRevert={(version) =>
          void run(async () => (await api.files.revert(projectId, fileId, version, file.version)).file)
        }
      />
    </section>
  );
}

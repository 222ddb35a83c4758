import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Api } from './api/api.ts';
import { explainError } from './api/errors.ts';
import type { Artifact, ProjectFile } from './api/types.ts';
import { ChatPanel } from './chat/chat-panel.tsx';
import { foldRun } from './chat/run-view.ts';
import { useSessionChat } from './chat/use-session-chat.ts';
import { Editor } from './files/editor.tsx';
import { FileTree } from './files/file-tree.tsx';
import { NewFile } from './files/new-file.tsx';
import { pendingArtifactOf } from './files/pending.ts';
import { useLanguage } from './i18n.tsx';
import { ProjectSettings } from './projects/project-settings.tsx';
import { SessionList } from './sessions/session-list.tsx';

/**
 * One open project: sessions and files on the left, the editor in the middle, the live chat on the
 * right. A file the agent starts writing opens in the editor and streams there.
 */
export function Workspace({ api, projectId, onClose }: { api: Api; projectId: string; onClose(): void }) {
  const { t, language } = useLanguage();
  const chat = useSessionChat(api, projectId, language);
  const [files, setFiles] = useState<ProjectFile[]>([]);
  const [artifacts, setArtifacts] = useState<Artifact[]>([]);
  const [filesError, setFilesError] = useState<string>();
  const [selected, setSelected] = useState<string>();
  const [refreshToken, setRefreshToken] = useState(0);
  const dirty = useRef(false);
  const lastTurn = chat.turns.at(-1);
  const view = useMemo(() => foldRun(lastTurn?.frames ?? []), [lastTurn?.frames]);
  const savedCount = view.items.filter((item) => item.kind === 'file' && (item.saved || item.removed)).length;

  const loadFiles = useCallback(() => {
    api.files
      .list(projectId)
      .then((answer) => {
        setFiles(answer.files);
        setFilesError(undefined);
      })
      .catch((error) => setFilesError(explainError(t, error)));
    // What is not accepted yet is marked in the tree and reviewed in the editor.
    api.artifacts
      .open(projectId)
      .then((answer) => setArtifacts(answer.artifacts))
      .catch(() => setArtifacts([]));
  }, [api, projectId, t]);
  const pendingIds = useMemo(
    () => new Set(files.filter((file) => pendingArtifactOf(file, artifacts)).map((file) => file.id)),
    [files, artifacts],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: list again when the agent created, saved or removed a file
  useEffect(() => {
    loadFiles();
    setRefreshToken((token) => token + 1);
  }, [loadFiles, savedCount, view.writingFileId, view.finished]);

  useEffect(() => {
    if (view.writingFileId && !dirty.current) setSelected(view.writingFileId);
  }, [view.writingFileId]);

  const streaming = selected ? view.files.get(selected) : undefined;
  const onDirtyChange = useCallback((value: boolean) => {
    dirty.current = value;
  }, []);

  return (
    <div className="workspace">
      <aside className="sidebar">
        <ProjectSettings api={api} projectId={projectId} onArchived={onClose} />
        <SessionList
          api={api}
          projectId={projectId}
          current={chat.sessionId}
          refresh={`${chat.sessionId}:${view.finished}`}
          onSelect={chat.selectSession}
        />
        <h2>{t.files}</h2>
        {filesError && (
          <p className="error-box" role="alert">
            {filesError}
          </p>
        )}
        <FileTree
          files={files}
          selectedId={selected}
          writingId={view.writingFileId}
          pendingIds={pendingIds}
          onSelect={setSelected}
        />
        <NewFile
          api={api}
          projectId={projectId}
          onCreated={(fileId) => {
            loadFiles();
            setSelected(fileId);
          }}
        />
      </aside>
      <main className="main">
        {selected ? (
          <Editor
            key={selected}
            api={api}
            projectId={projectId}
            fileId={selected}
            streaming={streaming}
            refreshToken={refreshToken}
            files={files}
            artifacts={artifacts}
            onRevise={async (artifactId, comment) => {
              await chat.revise(artifactId, comment);
              loadFiles();
            }}
            onChanged={loadFiles}
            onDirtyChange={onDirtyChange}
          />
        ) : (
          <p className="hint">{t.selectFile}</p>
        )}
      </main>
      <ChatPanel api={api} chat={chat} />
    </div>
  );
}

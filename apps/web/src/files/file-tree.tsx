import type { ProjectFile } from '../api/types.ts';
import { useT } from '../i18n.tsx';

interface Props {
  files: ProjectFile[];
  selectedId: string | undefined;
  writingId: string | undefined;
  /** Files whose text is AI text not accepted yet. */
  pendingIds: ReadonlySet<string>;
  onSelect(fileId: string): void;
}

/** Files grouped by folder (README: GET /projects/:id/files), AI drafts and unaccepted AI text marked. */
export function FileTree({ files, selectedId, writingId, pendingIds, onSelect }: Props) {
  const t = useT();
  if (files.length === 0) return <p className="hint">{t.noFiles}</p>;
  const folders = new Map<string, ProjectFile[]>();
  for (const file of files) folders.set(file.folder, [...(folders.get(file.folder) ?? []), file]);
  return (
    <nav className="file-tree" aria-label={t.files}>
      {[...folders.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([folder, inFolder]) => (
          <div key={folder} className="folder">
            {folder && <div className="folder-name">{folder}/</div>}
            <ul>
              {inFolder.map((file) => (
                <li key={file.id}>
                  <button
                    type="button"
                    className={file.id === selectedId ? 'file selected' : 'file'}
                    aria-current={file.id === selectedId ? 'true' : undefined}
                    data-testid="file-entry"
                    onClick={() => onSelect(file.id)}
                  >
                    <span className="file-title">{file.title}</span>
                    <span className="file-type">{file.file_type}</span>
                    {file.draft_of && <span className="badge draft">{t.aiDraft}</span>}
                    {pendingIds.has(file.id) && (
                      <span className="badge draft" data-testid="pending-badge">
                        {t.pending}
                      </span>
                    )}
                    {file.id === writingId && <span className="badge writing">✎</span>}
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ))}
    </nav>
  );
}

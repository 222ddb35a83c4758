import { useState } from 'react';
import type { Api } from '../api/api.ts';
import { explainError } from '../api/errors.ts';
import { useT } from '../i18n.tsx';

// The file types the agent's tools use for chapters, outlines and notes (README "Agent tools").
const FILE_TYPES = ['draft', 'outline', 'character', 'setting', 'note'] as const;

/** POST /projects/:id/files: an empty file of the author's own, opened once made. */
export function NewFile({
  api,
  projectId,
  onCreated,
}: {
  api: Api;
  projectId: string;
  onCreated(fileId: string): void;
}) {
  const t = useT();
  const [title, setTitle] = useState('');
  const [fileType, setFileType] = useState<string>('draft');
  const [error, setError] = useState<string>();
  return (
    <form
      className="new-file"
      onSubmit={(event) => {
        event.preventDefault();
        if (!title.trim()) return;
        api.files
          .create(projectId, title.trim(), fileType)
          .then(({ file }) => {
            setTitle('');
            setError(undefined);
            onCreated(file.id);
          })
          .catch((caught) => setError(explainError(t, caught)));
      }}
    >
      <input
        value={title}
        onChange={(event) => setTitle(event.target.value)}
        placeholder={t.newFile}
        aria-label={t.newFile}
      />
      <select value={fileType} onChange={(event) => setFileType(event.target.value)} aria-label={t.fileType}>
        {FILE_TYPES.map((type) => (
          <option key={type}>{type}</option>
        ))}
      </select>
      <button type="submit">+</button>
      {error && <p className="error-box">{error}</p>}
    </form>
  );
}

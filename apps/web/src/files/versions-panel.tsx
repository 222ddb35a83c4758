import { useEffect, useState } from 'react';
import type { Api } from '../api/api.ts';
import type { FileVersion } from '../api/types.ts';
import { useT } from '../i18n.tsx';
import { DiffView } from './diff-view.tsx';
import { diffLines } from './line-diff.ts';

interface Props {
  api: Api;
  projectId: string;
  fileId: string;
  currentVersion: number;
  /** The file's text now, to compare an old version against. */
  currentText: string;
  onRevert(version: number): void;
}

/** GET …/versions, newest first: who wrote each version, partial AI saves marked, revert. */
export function VersionsPanel({ api, projectId, fileId, currentVersion, currentText, onRevert }: Props) {
  const t = useT();
  const [versions, setVersions] = useState<FileVersion[]>([]);
  const [compared, setCompared] = useState<{ version: number; content: string } | undefined>();
  const compare = (version: number) =>
    void api.files
      .version(projectId, fileId, version)
      .then((answer) => setCompared({ version, content: answer.version.content }))
      .catch(() => setCompared(undefined));
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new current version means new history
  useEffect(() => {
    let live = true;
    api.files
      .versions(projectId, fileId)
      .then((answer) => live && setVersions(answer.versions))
      .catch(() => live && setVersions([]));
    return () => {
      live = false;
    };
  }, [api, projectId, fileId, currentVersion]);
  return (
    <details className="versions">
      <summary>
        {t.versions} ({versions.length})
      </summary>
      <ol>
        {versions.map((version) => (
          <li key={version.version} data-testid="version-row">
            <span>
              {t.version} {version.version}
            </span>
            <span className={`badge source-${version.source}`}>
              {version.source === 'ai' ? t.ai : t.author}
            </span>
            {version.partial && (
              <span className="badge partial" title={version.partial_reason ?? ''}>
                {t.partial}
              </span>
            )}
            <span className="hint">
              {version.chars} · {new Date(version.created_at).toLocaleString()}
            </span>
            {version.version !== currentVersion && (
              <>
                <button type="button" onClick={() => compare(version.version)}>
                  {t.compare}
                </button>
                <button type="button" onClick={() => onRevert(version.version)}>
                  {t.revert}
                </button>
              </>
            )}
          </li>
        ))}
      </ol>
      {compared && (
        <figure className="diff">
          <figcaption>
            {t.version} {compared.version} · {t.versionDiffHint}
          </figcaption>
          <DiffView testId="version-diff" lines={diffLines(compared.content, currentText)} />
        </figure>
      )}
    </details>
  );
}

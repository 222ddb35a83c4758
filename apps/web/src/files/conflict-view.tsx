import type { ProjectFile } from '../api/types.ts';
import { format } from '../format.ts';
import { useT } from '../i18n.tsx';
import { DiffView } from './diff-view.tsx';
import { diffLines } from './line-diff.ts';

interface Props {
  theirs: ProjectFile;
  mine: string;
  mineVersion: number;
  onKeepMine(): void;
  onTakeTheirs(): void;
}

/**
 * 409 version_conflict (README: PUT with a stale expected_version): both texts side by side and
 * an explicit choice. Keeping mine saves it on top of their version, so theirs stays in history.
 */
export function ConflictView({ theirs, mine, mineVersion, onKeepMine, onTakeTheirs }: Props) {
  const t = useT();
  return (
    <div className="conflict" role="alertdialog" aria-labelledby="conflict-title" data-testid="conflict">
      <h3 id="conflict-title">{t.conflictTitle}</h3>
      <p>{format(t.conflictExplain, { theirs: theirs.version, mine: mineVersion })}</p>
      <div className="conflict-sides">
        <figure>
          <figcaption>{t.theirs}</figcaption>
          <pre data-testid="conflict-theirs">{theirs.content}</pre>
        </figure>
        <figure>
          <figcaption>{t.yours}</figcaption>
          <pre data-testid="conflict-mine">{mine}</pre>
        </figure>
      </div>
      <details className="diff">
        <summary>{t.showDiff}</summary>
        <DiffView testId="conflict-diff" lines={diffLines(theirs.content ?? '', mine)} />
      </details>
      <div className="row">
        <button type="button" onClick={onKeepMine}>
          {t.keepMine}
        </button>
        <button type="button" onClick={onTakeTheirs}>
          {t.takeTheirs}
        </button>
      </div>
    </div>
  );
}

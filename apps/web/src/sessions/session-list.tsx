import { useEffect, useState } from 'react';
import { type Api, isMissingRoute } from '../api/api.ts';
import { knownSessions } from '../chat/turns-store.ts';
import { useT } from '../i18n.tsx';

interface Props {
  api: Api;
  projectId: string;
  current: string | undefined;
  /** Changes when a session starts or a run ends, to list it again. */
  refresh: unknown;
  onSelect(sessionId: string | undefined): void;
}

/**
 * GET /projects/:id/sessions (product API contract), newest activity first; where the gateway has
 * no such route yet, the sessions this tab started.
 */
export function SessionList({ api, projectId, current, refresh, onSelect }: Props) {
  const t = useT();
  const [sessions, setSessions] = useState<Array<{ sessionId: string; title: string }>>([]);
  const [local, setLocal] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: refresh is the trigger
  useEffect(() => {
    api.sessions
      .list(projectId)
      .then((answer) =>
        setSessions(
          answer.sessions.map((session) => ({ sessionId: session.session_id, title: session.title ?? '' })),
        ),
      )
      .catch((caught) => {
        if (!isMissingRoute(caught)) return;
        setLocal(true);
        setSessions(knownSessions(projectId));
      });
  }, [api, projectId, refresh]);
  return (
    <nav className="sessions" aria-label={t.sessions}>
      <button type="button" onClick={() => onSelect(undefined)} data-testid="new-session">
        + {t.newSession}
      </button>
      {local && <p className="hint">{t.sessionsLocal}</p>}
      <ul>
        {sessions.map((session) => (
          <li key={session.sessionId}>
            <button
              type="button"
              className={session.sessionId === current ? 'selected' : undefined}
              aria-current={session.sessionId === current ? 'true' : undefined}
              onClick={() => onSelect(session.sessionId)}
            >
              {session.title || t.untitled}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

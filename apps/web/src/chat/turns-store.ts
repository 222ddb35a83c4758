import type { StreamedFrame } from '@quill/client';

/** One exchange: what the author sent and the run's frames as they arrived (with their SSE ids). */
export interface Turn {
  message: string;
  runId: string | undefined;
  frames: StreamedFrame[];
  /** `done` arrived, or the turn came from history: nothing to resume. */
  finished: boolean;
}

/**
 * The turns of a session, kept in sessionStorage so a reload mid-run shows what was seen and
 * resumes after the newest stored frame id (README "Run lifecycle": Last-Event-ID continues
 * exactly after the last frame seen), never from a guess.
 */
const turnsKey = (projectId: string, sessionId: string) => `quill.turns.${projectId}.${sessionId}`;
const sessionsKey = (projectId: string) => `quill.sessions.${projectId}`;
const currentKey = (projectId: string) => `quill.current-session.${projectId}`;

export function loadTurns(projectId: string, sessionId: string): Turn[] {
  try {
    const stored = sessionStorage.getItem(turnsKey(projectId, sessionId));
    return stored ? (JSON.parse(stored) as Turn[]) : [];
  } catch {
    return [];
  }
}

export function saveTurns(projectId: string, sessionId: string, turns: readonly Turn[]): void {
  try {
    sessionStorage.setItem(turnsKey(projectId, sessionId), JSON.stringify(turns));
  } catch {
    // Storage full: the run still streams; only a reload would start it from the beginning.
  }
}

/** Sessions this tab started, newest first, for a gateway without the sessions list. */
export function knownSessions(projectId: string): Array<{ sessionId: string; title: string }> {
  try {
    return JSON.parse(sessionStorage.getItem(sessionsKey(projectId)) ?? '[]');
  } catch {
    return [];
  }
}

export function rememberSession(projectId: string, sessionId: string, title: string): void {
  const others = knownSessions(projectId).filter((known) => known.sessionId !== sessionId);
  sessionStorage.setItem(sessionsKey(projectId), JSON.stringify([{ sessionId, title }, ...others]));
}

export function currentSession(projectId: string): string | undefined {
  return sessionStorage.getItem(currentKey(projectId)) ?? undefined;
}

export function setCurrentSession(projectId: string, sessionId: string | undefined): void {
  if (sessionId) sessionStorage.setItem(currentKey(projectId), sessionId);
  else sessionStorage.removeItem(currentKey(projectId));
}

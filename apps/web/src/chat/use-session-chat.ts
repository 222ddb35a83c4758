import type { StreamedFrame } from '@quill/client';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { Api } from '../api/api.ts';
import { isMissingRoute, QuillApiError } from '../api/api.ts';
import type { Language } from '../i18n.tsx';
import {
  currentSession,
  loadTurns,
  rememberSession,
  saveTurns,
  setCurrentSession,
  type Turn,
} from './turns-store.ts';

const FLUSH_MS = 60;

export interface SessionChat {
  sessionId: string | undefined;
  turns: Turn[];
  streaming: boolean;
  /** A message is on its way to the gateway (POST /agent/stream not answered yet). */
  sending: boolean;
  resumed: boolean;
  error: unknown;
  suggestions: string[];
  /**
   * Sends a message as a run: resolves `true` once the gateway started it (its frames then stream
   * into the last turn), `false` when it was refused (the error is in `error`).
   */
  send(message: string): Promise<boolean>;
  stop(): Promise<void>;
  steer(message: string): Promise<void>;
  /** Undo everything the last run did to files (POST /agent/runs/:runId/undo); resolves to the count. */
  undoLast(): Promise<number | undefined>;
  /** The last reply again, on a new branch (POST /sessions/:id/regenerate). */
  regenerate(): Promise<void>;
  /**
   * Sends an artifact back with a comment (POST …/artifacts/:id/request-revision): resolves once
   * the revision run started (rejects when it was refused); the run then streams as a turn.
   */
  revise(artifactId: string, comment: string): Promise<void>;
  selectSession(sessionId: string | undefined): void;
  clearError(): void;
}

/**
 * A session's chat: sends a message as a run (POST /agent/stream through libs/client), reads its
 * frames into the last turn, and after a reload resumes the unfinished run from the last stored
 * frame id (`agent.resume`, Last-Event-ID). Frames are flushed to React state in small batches.
 */
export function useSessionChat(api: Api, projectId: string, language: Language): SessionChat {
  const [sessionId, setSessionId] = useState(() => currentSession(projectId));
  const [turns, setTurns] = useState<Turn[]>(() => (sessionId ? loadTurns(projectId, sessionId) : []));
  const [streaming, setStreaming] = useState(false);
  const [sending, setSending] = useState(false);
  const launching = useRef(false);
  const [resumed, setResumed] = useState(false);
  const [error, setError] = useState<unknown>();
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const abort = useRef<AbortController | undefined>(undefined);
  const turnsRef = useRef(turns);
  turnsRef.current = turns;

  const finishLastTurn = useCallback(
    (session: string) => {
      const current = turnsRef.current;
      const last = current.at(-1);
      if (!last) return;
      const next = [...current.slice(0, -1), { ...last, finished: true }];
      turnsRef.current = next;
      saveTurns(projectId, session, next);
      setTurns(next);
    },
    [projectId],
  );

  const consume = useCallback(
    async (session: string, frames: AsyncIterable<StreamedFrame>, controller: AbortController) => {
      setStreaming(true);
      let pending: StreamedFrame[] = [];
      const flush = () => {
        if (pending.length === 0) return;
        const batch = pending;
        pending = [];
        const current = turnsRef.current;
        const last = current.at(-1)!;
        const finished = batch.some((entry) => entry.frame.type === 'done');
        const next = [...current.slice(0, -1), { ...last, frames: [...last.frames, ...batch], finished }];
        turnsRef.current = next;
        saveTurns(projectId, session, next);
        setTurns(next);
      };
      const timer = setInterval(flush, FLUSH_MS);
      try {
        for await (const entry of frames) pending.push(entry);
        flush();
        api.client.agent
          .suggest({ project_id: projectId, session_id: session })
          .then((answer) => setSuggestions(answer.suggestions))
          .catch(() => setSuggestions([]));
      } catch (caught) {
        flush();
        if (controller.signal.aborted) return;
        setError(caught);
        // A refusal (the run is gone, or not this author's) will not change on a retry: stop
        // resuming it on every reload. A network failure stays resumable.
        if (caught instanceof QuillApiError) finishLastTurn(session);
      } finally {
        clearInterval(timer);
        if (abort.current === controller) {
          abort.current = undefined;
          setStreaming(false);
        }
      }
    },
    [api, projectId, finishLastTurn],
  );

  // A reload mid-run: continue the unfinished turn after its newest stored frame.
  useEffect(() => {
    const last = turnsRef.current.at(-1);
    // A run this hook is already reading (just sent) is not opened twice.
    if (!sessionId || !last?.runId || last.finished || abort.current) return;
    const controller = new AbortController();
    abort.current = controller;
    setResumed(last.frames.length > 0);
    const lastId = last.frames.at(-1)?.id;
    void consume(
      sessionId,
      api.client.agent.resume(last.runId, lastId, { signal: controller.signal }),
      controller,
    );
    return () => {
      controller.abort();
      if (abort.current === controller) abort.current = undefined;
    };
  }, [api, sessionId, consume]);

  const send = useCallback(
    async (message: string): Promise<boolean> => {
      if (launching.current) return false;
      launching.current = true;
      setError(undefined);
      setSuggestions([]);
      setResumed(false);
      const controller = new AbortController();
      const before = turnsRef.current;
      // The message shows at once as a turn of its own, before the gateway answers (a launch can
      // take a while on a busy server): the author sees it went, and cannot send a second beside it.
      const pending = [...before, { message, runId: undefined, frames: [], finished: false }];
      turnsRef.current = pending;
      setTurns(pending);
      setSending(true);
      let run: Awaited<ReturnType<typeof api.client.agent.stream>>;
      try {
        run = await api.client.agent.stream(
          {
            project_id: projectId,
            message,
            ui_language: language,
            ...(sessionId ? { session_id: sessionId } : {}),
          },
          { signal: controller.signal },
        );
      } catch (caught) {
        // Refused (a busy session, a quota, an outage): the turn goes again and the composer gets
        // the message back, so nothing the author wrote is lost.
        if (turnsRef.current === pending) {
          turnsRef.current = before;
          setTurns(before);
        }
        setError(caught);
        return false;
      } finally {
        launching.current = false;
        setSending(false);
      }
      const base = run.sessionId === sessionId ? before : loadTurns(projectId, run.sessionId);
      const next = [...base, { message, runId: run.runId, frames: [], finished: false }];
      turnsRef.current = next;
      saveTurns(projectId, run.sessionId, next);
      rememberSession(projectId, run.sessionId, message.slice(0, 40));
      setCurrentSession(projectId, run.sessionId);
      abort.current = controller;
      setTurns(next);
      // The resume effect skips this turn: it is streaming already.
      if (run.sessionId !== sessionId) setSessionId(run.sessionId);
      void consume(run.sessionId, run, controller);
      return true;
    },
    [api, projectId, sessionId, language, consume],
  );

  const selectSession = useCallback(
    (next: string | undefined) => {
      abort.current?.abort();
      abort.current = undefined;
      setStreaming(false);
      setError(undefined);
      setSuggestions([]);
      setCurrentSession(projectId, next);
      const local = next ? loadTurns(projectId, next) : [];
      turnsRef.current = local;
      setTurns(local);
      setSessionId(next);
      if (next && local.length === 0) {
        api.sessions
          .messages(next)
          .then(({ messages }) => {
            const history = historyTurns(messages);
            turnsRef.current = history;
            setTurns(history);
          })
          .catch((caught) => {
            if (!isMissingRoute(caught)) setError(caught);
          });
      }
    },
    [api, projectId],
  );

  const stop = useCallback(async () => {
    const runId = turnsRef.current.at(-1)?.runId;
    if (!runId) return;
    await api.client.agent.stop({ run_id: runId }).catch(setError);
  }, [api]);

  const steer = useCallback(
    async (message: string) => {
      if (!sessionId) return;
      await api.client.agent.steer(sessionId, message).catch(setError);
    },
    [api, sessionId],
  );

  const undoLast = useCallback(async () => {
    const runId = turnsRef.current.at(-1)?.runId;
    if (!runId) return undefined;
    setError(undefined);
    try {
      return (await api.runs.undo(runId)).files.length;
    } catch (caught) {
      setError(caught);
      return undefined;
    }
  }, [api]);

  const regenerate = useCallback(async () => {
    const last = turnsRef.current.at(-1);
    if (!sessionId || !last) return;
    setError(undefined);
    setSuggestions([]);
    const controller = new AbortController();
    try {
      const run = await api.sessions.regenerate(sessionId, language);
      // The old reply stays on its branch (listed by GET /sessions/:id/branches); here the last
      // turn shows the new one.
      const next = [
        ...turnsRef.current.slice(0, -1),
        { ...last, runId: run.run_id, frames: [], finished: false },
      ];
      turnsRef.current = next;
      saveTurns(projectId, sessionId, next);
      abort.current = controller;
      setTurns(next);
      await consume(
        sessionId,
        api.client.agent.resume(run.run_id, undefined, { signal: controller.signal }),
        controller,
      );
    } catch (caught) {
      setError(caught);
    }
  }, [api, projectId, sessionId, language, consume]);

  const revise = useCallback(
    async (artifactId: string, comment: string) => {
      setError(undefined);
      setSuggestions([]);
      const run = await api.artifacts.requestRevision(projectId, artifactId, comment);
      // The revision run is in the artifact's session: the chat follows it there.
      abort.current?.abort();
      const controller = new AbortController();
      const base = run.session_id === sessionId ? turnsRef.current : loadTurns(projectId, run.session_id);
      const next = [...base, { message: comment, runId: run.run_id, frames: [], finished: false }];
      turnsRef.current = next;
      saveTurns(projectId, run.session_id, next);
      setCurrentSession(projectId, run.session_id);
      abort.current = controller;
      setTurns(next);
      if (run.session_id !== sessionId) setSessionId(run.session_id);
      void consume(
        run.session_id,
        api.client.agent.resume(run.run_id, undefined, { signal: controller.signal }),
        controller,
      );
    },
    [api, projectId, sessionId, consume],
  );

  return {
    undoLast,
    regenerate,
    revise,
    sessionId,
    turns,
    streaming,
    sending,
    resumed,
    error,
    suggestions,
    send,
    stop,
    steer,
    selectSession,
    clearError: () => setError(undefined),
  };
}

/** History from GET /sessions/:id/messages (product API contract): user message + reply text. */
function historyTurns(messages: Array<{ role: string; content: string; run_id: string | null }>): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'user')
      turns.push({
        message: message.content,
        runId: message.run_id ?? undefined,
        frames: [],
        finished: true,
      });
    else if (turns.length > 0) {
      const last = turns.at(-1)!;
      last.frames.push({
        id: last.frames.length + 1,
        frame: { type: 'text', agent: 'writer', content: message.content, run_id: last.runId ?? '', ts: '' },
      });
    }
  }
  return turns;
}

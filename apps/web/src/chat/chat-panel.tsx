import { useEffect, useMemo, useRef, useState } from 'react';
import type { Api } from '../api/api.ts';
import { explainError } from '../api/errors.ts';
import { format } from '../format.ts';
import { useT } from '../i18n.tsx';
import { QuotaBadge } from '../shell/quota-badge.tsx';
import { Composer } from './composer.tsx';
import { RunItems } from './run-items.tsx';
import { foldRun } from './run-view.ts';
import type { Turn } from './turns-store.ts';
import type { SessionChat } from './use-session-chat.ts';

/** The live chat: each turn's message and its run, Stop/Steer while streaming, suggestions after. */
export function ChatPanel({ api, chat }: { api: Api; chat: SessionChat }) {
  const t = useT();
  const log = useRef<HTMLDivElement>(null);
  const lastTurn = chat.turns.at(-1);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll when new frames arrive
  useEffect(() => {
    log.current?.scrollTo({ top: log.current.scrollHeight });
  }, [lastTurn?.frames.length]);
  return (
    <section className="chat" aria-label={t.chat} id="chat" tabIndex={-1}>
      <header className="chat-head">
        <h2>{t.chat}</h2>
        <QuotaBadge api={api} refresh={chat.streaming} />
      </header>
      <div className="chat-log" ref={log} aria-live="polite">
        {chat.resumed && <div className="event resumed">{t.resumed}</div>}
        {chat.turns.map((turn, index) => (
          <TurnView
            key={turn.runId ?? index}
            turn={turn}
            onAnswer={
              index === chat.turns.length - 1 && !chat.streaming && !chat.sending ? chat.send : undefined
            }
          />
        ))}
        {chat.error !== undefined && (
          <div className="error-box" role="alert" data-testid="chat-error">
            {explainError(t, chat.error)}
            <button type="button" onClick={chat.clearError}>
              {t.dismiss}
            </button>
          </div>
        )}
        {!chat.streaming && !chat.sending && chat.suggestions.length > 0 && (
          <fieldset className="suggestions">
            <legend className="hint">{t.suggestions}</legend>
            {chat.suggestions.map((suggestion) => (
              <button type="button" key={suggestion} onClick={() => void chat.send(suggestion)}>
                {suggestion}
              </button>
            ))}
          </fieldset>
        )}
      </div>
      {!chat.streaming && !chat.sending && lastTurn?.runId && <TurnActions chat={chat} />}
      {chat.streaming ? <RunControls chat={chat} /> : <Composer onSend={chat.send} sending={chat.sending} />}
    </section>
  );
}

function TurnView({ turn, onAnswer }: { turn: Turn; onAnswer: ((answer: string) => void) | undefined }) {
  const t = useT();
  const view = useMemo(() => foldRun(turn.frames), [turn.frames]);
  return (
    <article className="turn">
      <div className="user-message" data-testid="user-message">
        <span className="agent-label">{t.you}</span>
        {turn.message}
      </div>
      <RunItems items={view.items} {...(view.waitingUser && onAnswer ? { onAnswer } : {})} />
    </article>
  );
}

/** Undo the last run's file changes, or regenerate its reply (README "Snapshots, undo and branches"). */
function TurnActions({ chat }: { chat: SessionChat }) {
  const t = useT();
  const [undone, setUndone] = useState<number | undefined>();
  return (
    <div className="turn-actions">
      <button type="button" data-testid="undo-run" onClick={() => void chat.undoLast().then(setUndone)}>
        {t.undoRun}
      </button>
      <button
        type="button"
        data-testid="regenerate"
        onClick={() => {
          setUndone(undefined);
          void chat.regenerate();
        }}
      >
        {t.regenerate}
      </button>
      {undone !== undefined && <span className="hint">{format(t.undone, { count: undone })}</span>}
    </div>
  );
}

/** Stop and Steer replace the composer while a run streams (README: POST /agent/stop, /agent/steer). */
function RunControls({ chat }: { chat: SessionChat }) {
  const t = useT();
  const [note, setNote] = useState('');
  const [sent, setSent] = useState(false);
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        if (!note.trim()) return;
        void chat.steer(note.trim()).then(() => setSent(true));
        setNote('');
      }}
    >
      <input
        value={note}
        onChange={(event) => {
          setNote(event.target.value);
          setSent(false);
        }}
        placeholder={t.steerPlaceholder}
        aria-label={t.steer}
      />
      <button type="submit">{t.steer}</button>
      <button type="button" className="danger" onClick={() => void chat.stop()} data-testid="stop">
        {t.stop}
      </button>
      {sent && <span className="hint">{t.steerSent}</span>}
    </form>
  );
}

import { useState } from 'react';
import { format } from '../format.ts';
import { useT } from '../i18n.tsx';
import type { ChatItem } from './run-view.ts';
import { ToolCard } from './tool-card.tsx';

interface Props {
  items: ChatItem[];
  /** Answers a clarification question in place: sent as the next message of the session. */
  onAnswer?: (answer: string) => void;
}

/** A run's chat items: streamed text, collapsible thinking, tool cards, handoffs, file writes. */
export function RunItems({ items, onAnswer }: Props) {
  return (
    <>
      {items.map((item) => (
        <RunItem key={item.key} item={item} onAnswer={onAnswer} />
      ))}
    </>
  );
}

function RunItem({ item, onAnswer }: { item: ChatItem; onAnswer: Props['onAnswer'] }) {
  const t = useT();
  switch (item.kind) {
    case 'text':
      return (
        <div className="assistant-text" data-agent={item.agent}>
          <span className="agent-label">{item.agent}</span>
          <span data-testid="assistant-text">{item.content}</span>
        </div>
      );
    case 'thinking':
      return (
        <details className="thinking">
          <summary>
            {t.thinking} · {item.agent}
          </summary>
          <pre>{item.content}</pre>
        </details>
      );
    case 'tool':
      return <ToolCard item={item} />;
    case 'handoff':
      return (
        <div className="event handoff" title={item.reason}>
          {format(t.handoff, { from: item.from, to: item.to })}
        </div>
      );
    case 'file':
      return <FileLine item={item} />;
    case 'clarification':
      return <Clarification question={item.question} onAnswer={onAnswer} />;
    case 'steering':
      return <div className="event">{format(t.steeringReceived, { content: item.content })}</div>;
    case 'stopped':
      return (
        <div className="event stopped" data-testid="run-stopped">
          {format(t.stopped, { reason: item.reason })}
        </div>
      );
    case 'complete':
      return (
        <div className="event complete" data-testid="run-complete">
          {t.complete}
        </div>
      );
    case 'error':
      return (
        <div className="event run-error" role="alert">
          {item.message} <code>{item.code}</code>
        </div>
      );
    case 'refund':
      return <div className="event">{format(t.refunded, { credits: item.credits })}</div>;
  }
}

function FileLine({ item }: { item: Extract<ChatItem, { kind: 'file' }> }) {
  const t = useT();
  if (item.removed) return <div className="event">{format(t.fileRemoved, { title: item.title })}</div>;
  const saved = item.saved;
  if (!saved) return <div className="event writing">{format(t.writingFile, { title: item.title })}</div>;
  const text =
    saved.saved_as === 'draft'
      ? format(t.fileSavedDraft, { title: saved.draft_of?.title ?? saved.title })
      : format(t.fileSaved, { title: saved.title, version: saved.version, chars: saved.chars });
  return (
    <div className="event file-saved" data-testid="file-saved">
      {text}
      {saved.partial && (
        <span className="badge partial">{format(t.filePartial, { reason: saved.partial_reason ?? '' })}</span>
      )}
    </div>
  );
}

function Clarification({ question, onAnswer }: { question: string; onAnswer: Props['onAnswer'] }) {
  const t = useT();
  const [answer, setAnswer] = useState('');
  return (
    <form
      className="clarification"
      onSubmit={(event) => {
        event.preventDefault();
        if (answer.trim() && onAnswer) onAnswer(answer.trim());
        setAnswer('');
      }}
    >
      <strong>{t.clarification}:</strong> {question}
      {onAnswer && (
        <div className="row">
          <input value={answer} onChange={(event) => setAnswer(event.target.value)} aria-label={t.answer} />
          <button type="submit">{t.answer}</button>
        </div>
      )}
    </form>
  );
}

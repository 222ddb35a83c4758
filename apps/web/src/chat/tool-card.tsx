import { useT } from '../i18n.tsx';
import type { ChatItem } from './run-view.ts';

type ToolItem = Extract<ChatItem, { kind: 'tool' }>;

/** One card per tool call, keyed by its tool_call_id: started → progress → result. */
export function ToolCard({ item }: { item: ToolItem }) {
  const t = useT();
  const status = { running: t.toolRunning, ok: t.toolOk, error: t.toolError }[item.status];
  const title = typeof item.arguments.title === 'string' ? ` 《${item.arguments.title}》` : '';
  return (
    <div className={`tool-card tool-${item.status}`} data-testid="tool-card" data-status={item.status}>
      <div className="tool-head">
        <code>{item.name}</code>
        {title}
        <span className="tool-status">{status}</span>
      </div>
      {item.progress && (
        <div className="tool-progress">
          {item.progress.completed}/{item.progress.total} {item.progress.message}
        </div>
      )}
      {item.summary && (
        <div className="tool-summary">
          {item.errorType && <strong>{item.errorType}: </strong>}
          {item.summary}
        </div>
      )}
    </div>
  );
}

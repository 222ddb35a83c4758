import { useState } from 'react';
import { useT } from '../i18n.tsx';

/** The message box: Ctrl/⌘+Enter sends, so Enter stays a new line for longer requests. */
export function Composer({ onSend }: { onSend: (message: string) => Promise<void> }) {
  const t = useT();
  const [message, setMessage] = useState('');
  const submit = () => {
    const text = message.trim();
    if (!text) return;
    setMessage('');
    void onSend(text);
  };
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <textarea
        value={message}
        rows={3}
        placeholder={t.messagePlaceholder}
        aria-label={t.messagePlaceholder}
        data-testid="composer"
        onChange={(event) => setMessage(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            submit();
          }
        }}
      />
      <button type="submit">{t.send}</button>
    </form>
  );
}

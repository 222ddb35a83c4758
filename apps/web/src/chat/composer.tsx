import { useState } from 'react';
import { useT } from '../i18n.tsx';

/**
 * The message box: Ctrl/⌘+Enter sends, so Enter stays a new line for longer requests. It is read
 * only while a message is on its way, and a message the gateway refused comes back into it.
 */
export function Composer({
  onSend,
  sending,
}: {
  onSend: (message: string) => Promise<boolean>;
  sending: boolean;
}) {
  const t = useT();
  const [message, setMessage] = useState('');
  const submit = () => {
    const text = message.trim();
    if (!text || sending) return;
    const typed = message;
    setMessage('');
    void onSend(text).then((sent) => {
      if (!sent) setMessage((current) => current || typed);
    });
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
        readOnly={sending}
        aria-busy={sending}
        onChange={(event) => setMessage(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            submit();
          }
        }}
      />
      <button type="submit" disabled={sending}>
        {sending ? t.sending : t.send}
      </button>
    </form>
  );
}

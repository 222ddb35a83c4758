import { useState } from 'react';
import { createApi } from '../api/api.ts';
import { explainError } from '../api/errors.ts';
import { useT } from '../i18n.tsx';
import { LanguageSwitch } from './language-switch.tsx';

/**
 * Sign in with an API key (README: bearer `qk_…`). The key is checked with GET /quota, which every
 * signed-in caller may read, and kept in sessionStorage so it leaves with the tab.
 */
export function SignIn({ onSignedIn }: { onSignedIn(apiKey: string): void }) {
  const t = useT();
  const [apiKey, setApiKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <main className="sign-in">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const key = apiKey.trim();
          if (!key) return;
          setBusy(true);
          setError(undefined);
          createApi(key)
            .quota()
            .then(() => onSignedIn(key))
            .catch((caught) => setError(caught?.status === 401 ? t.badKey : explainError(t, caught)))
            .finally(() => setBusy(false));
        }}
      >
        <h1>{t.signInTitle}</h1>
        <label>
          {t.apiKeyLabel}
          <input
            type="password"
            autoComplete="off"
            value={apiKey}
            onChange={(event) => setApiKey(event.target.value)}
            data-testid="api-key"
            // biome-ignore lint/a11y/noAutofocus: the only field on the page
            autoFocus
          />
        </label>
        <p className="hint">{t.apiKeyHint}</p>
        {error && (
          <p className="error-box" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? t.signingIn : t.signIn}
        </button>
        <LanguageSwitch />
      </form>
    </main>
  );
}

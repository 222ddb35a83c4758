import { useMemo, useState } from 'react';
import { createApi } from './api/api.ts';
import { useT } from './i18n.tsx';
import { ProjectPicker } from './projects/project-picker.tsx';
import { LanguageSwitch } from './shell/language-switch.tsx';
import { SignIn } from './shell/sign-in.tsx';
import { Workspace } from './workspace.tsx';

// sessionStorage, not localStorage: a key is a bearer credential and should leave with the tab.
const KEY_STORAGE = 'quill.api-key';
const PROJECT_STORAGE = 'quill.project';

/** Sign-in → project picker → workspace; the API key and open project survive a reload. */
export function App() {
  const t = useT();
  const [apiKey, setApiKey] = useState(() => sessionStorage.getItem(KEY_STORAGE) ?? undefined);
  const [projectId, setProjectId] = useState(() => sessionStorage.getItem(PROJECT_STORAGE) ?? undefined);
  const api = useMemo(() => (apiKey ? createApi(apiKey) : undefined), [apiKey]);

  if (!api) {
    return (
      <SignIn
        onSignedIn={(key) => {
          sessionStorage.setItem(KEY_STORAGE, key);
          setApiKey(key);
        }}
      />
    );
  }
  const openProject = (id: string | undefined) => {
    if (id) sessionStorage.setItem(PROJECT_STORAGE, id);
    else sessionStorage.removeItem(PROJECT_STORAGE);
    setProjectId(id);
  };
  return (
    <div className="app">
      <a className="skip" href="#chat">
        {t.skipToChat}
      </a>
      <header className="topbar">
        <strong className="brand">{t.appName}</strong>
        {projectId && (
          <button type="button" onClick={() => openProject(undefined)} data-testid="switch-project">
            ← {t.switchProject}
          </button>
        )}
        <span className="spacer" />
        <LanguageSwitch />
        <button
          type="button"
          onClick={() => {
            sessionStorage.clear();
            setApiKey(undefined);
            setProjectId(undefined);
          }}
          data-testid="sign-out"
        >
          {t.signOut}
        </button>
      </header>
      {projectId ? (
        <Workspace key={projectId} api={api} projectId={projectId} onClose={() => openProject(undefined)} />
      ) : (
        <ProjectPicker api={api} onOpen={(id) => openProject(id)} />
      )}
    </div>
  );
}

import { createContext, type ReactNode, useContext, useMemo, useState } from 'react';
import { en, type Strings } from './strings-en.ts';
import { zh } from './strings-zh.ts';

export type Language = 'zh' | 'en';
export type { Strings };

const STRINGS: Record<Language, Strings> = { zh, en };
const STORAGE_KEY = 'quill.language';

interface LanguageState {
  language: Language;
  t: Strings;
  setLanguage(language: Language): void;
}

const LanguageContext = createContext<LanguageState | undefined>(undefined);

/** The UI language; it is also sent as `ui_language` with each run (README "HTTP API"). */
export function LanguageProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(() =>
    localStorage.getItem(STORAGE_KEY) === 'en' ? 'en' : 'zh',
  );
  const value = useMemo<LanguageState>(
    () => ({
      language,
      t: STRINGS[language],
      setLanguage(next) {
        localStorage.setItem(STORAGE_KEY, next);
        document.documentElement.lang = next;
        setLanguageState(next);
      },
    }),
    [language],
  );
  return <LanguageContext.Provider value={value}>{children}</LanguageContext.Provider>;
}

export function useLanguage(): LanguageState {
  const state = useContext(LanguageContext);
  if (!state) throw new Error('useLanguage outside LanguageProvider');
  return state;
}

export function useT(): Strings {
  return useLanguage().t;
}

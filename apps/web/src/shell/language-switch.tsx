import { type Language, useLanguage } from '../i18n.tsx';

export function LanguageSwitch() {
  const { language, setLanguage, t } = useLanguage();
  return (
    <label className="language">
      {t.language}{' '}
      <select value={language} onChange={(event) => setLanguage(event.target.value as Language)}>
        <option value="zh">中文</option>
        <option value="en">English</option>
      </select>
    </label>
  );
}

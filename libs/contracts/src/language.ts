import type { UiLanguage } from './roles.ts';

/** CJK ideographs: what makes a text Chinese for Quill's language rules. */
export const CJK_PATTERN = /[\u3400-\u9fff\uf900-\ufaff]/;

/**
 * The language the author writes this turn in (docs/agent-behaviour.md, reply language): the
 * author's latest message decides, ideographs counting double against Latin letters; the UI
 * language only breaks a tie (a message of digits, emoji or punctuation).
 */
export function replyLanguage(message: string, uiLanguage: UiLanguage): UiLanguage {
  const cjk = message.match(/[\u3400-\u9fff]/g)?.length ?? 0;
  const latin = message.match(/[A-Za-z]/g)?.length ?? 0;
  if (cjk === 0 && latin === 0) return uiLanguage;
  return cjk * 2 >= latin ? 'zh' : 'en';
}

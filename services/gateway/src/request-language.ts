import { UiLanguage } from '@quill/contracts';

/**
 * The language a requester reads Quill's messages in (docs/protocol.md, error messages): the
 * `ui_language` the request states (the run-start body carries the author's UI setting, a run
 * stream's query may), else the first `accept-language` preference Quill speaks,
 * else English. It only picks the `message` text; the error code never changes.
 */
export function requestLanguage(request: {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  query?: unknown;
}): UiLanguage {
  const stated = statedLanguage(request.body) ?? statedLanguage(request.query);
  if (stated) return stated;
  const header = request.headers['accept-language'];
  return acceptedLanguage(Array.isArray(header) ? header.join(',') : header) ?? 'en';
}

function statedLanguage(value: unknown): UiLanguage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const parsed = UiLanguage.safeParse((value as Record<string, unknown>).ui_language);
  return parsed.success ? parsed.data : undefined;
}

/** `zh-CN,zh;q=0.9,en;q=0.8` → zh: the highest-weighted tag whose primary subtag Quill has. */
export function acceptedLanguage(header: string | undefined): UiLanguage | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...parameters] = part.trim().split(';');
      const weight = parameters.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { primary: tag.trim().toLowerCase().split('-')[0] ?? '', q: weight ? Number(weight) : 1, index };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { primary } of ranked) {
    const parsed = UiLanguage.safeParse(primary);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

import { useEffect, useState } from 'react';
import type { Api } from '../api/api.ts';
import type { Quota } from '../api/types.ts';
import { format } from '../format.ts';
import { useT } from '../i18n.tsx';

/** GET /quota, read again whenever a run starts or ends (`refresh` changes). */
export function QuotaBadge({ api, refresh }: { api: Api; refresh: unknown }) {
  const t = useT();
  const [quota, setQuota] = useState<Quota>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: refresh is the trigger
  useEffect(() => {
    api
      .quota()
      .then(setQuota)
      .catch(() => setQuota(undefined));
  }, [api, refresh]);
  if (!quota) return null;
  return (
    <span className="quota" data-testid="quota">
      {format(t.quota, { credits: quota.credits })} ·{' '}
      {format(t.tokensToday, { tokens: quota.used_today_tokens })}
    </span>
  );
}

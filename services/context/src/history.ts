import { Breadcrumbs, type ChatMessage } from '@quill/contracts';
import type { HistoryMessage } from '@quill/db';
import type { TokenCounter } from './budget.ts';
import { withBreadcrumbs } from './render.ts';

/**
 * The history window. Messages are rendered the same way for every role (the cached prefix must
 * not depend on who asks), so breadcrumbs name only files every role may see.
 */
export interface RenderedTurnMessage {
  seq: number;
  message: ChatMessage;
  tokens: number;
}

/** Per-message framing the providers add (role markers), as in the ledger's estimate. */
const MESSAGE_OVERHEAD_TOKENS = 3;

export function parseBreadcrumbs(value: unknown): Breadcrumbs | null {
  const parsed = Breadcrumbs.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/**
 * Keeps breadcrumb entries for files visible to every role (`all`); a deleted file is kept (its
 * deletion is the news). Role-private titles never enter the shared prefix.
 */
export function publicBreadcrumbs(
  breadcrumbs: Breadcrumbs | null,
  visibilityOf: (fileId: string) => string | undefined,
): Breadcrumbs | null {
  if (!breadcrumbs) return null;
  const isPublic = (fileId: string) => visibilityOf(fileId) === 'all';
  return {
    v: 1,
    created: breadcrumbs.created.filter((file) => isPublic(file.file_id)),
    edited: breadcrumbs.edited.filter((file) => isPublic(file.file_id)),
    deleted: breadcrumbs.deleted.filter(
      (file) => visibilityOf(file.file_id) === undefined || isPublic(file.file_id),
    ),
    read: breadcrumbs.read.filter((file) => isPublic(file.file_id)),
  };
}

export function renderHistory(
  messages: readonly HistoryMessage[],
  visibilityOf: (fileId: string) => string | undefined,
  count: TokenCounter,
): RenderedTurnMessage[] {
  return messages.map((stored) => {
    const message: ChatMessage =
      stored.role === 'assistant'
        ? {
            role: 'assistant',
            content: withBreadcrumbs(
              stored.content,
              publicBreadcrumbs(parseBreadcrumbs(stored.breadcrumbs), visibilityOf),
            ),
          }
        : { role: 'user', content: stored.content };
    return { seq: stored.seq, message, tokens: count(message.content ?? '') + MESSAGE_OVERHEAD_TOKENS };
  });
}

/**
 * Splits the window at a turn boundary (a user message starts a turn) so that what is kept fits
 * `targetTokens`; returns how many leading messages go. Whole turns go together, so a kept
 * assistant reply never loses the question it answers.
 */
export function evictionCount(messages: readonly RenderedTurnMessage[], targetTokens: number): number {
  let total = messages.reduce((sum, message) => sum + message.tokens, 0);
  let cut = 0;
  while (total > targetTokens && cut < messages.length) {
    // Drop one whole turn: the message at `cut` and everything up to the next user message.
    let next = cut + 1;
    while (next < messages.length && messages[next]!.message.role !== 'user') next++;
    for (let index = cut; index < next; index++) total -= messages[index]!.tokens;
    cut = next;
  }
  return cut;
}

export function totalTokens(messages: readonly RenderedTurnMessage[]): number {
  return messages.reduce((sum, message) => sum + message.tokens, 0);
}

/** The plain transcript of evicted messages, for the summariser and the archive. */
export function transcript(messages: readonly RenderedTurnMessage[]): string {
  return messages
    .map(
      (entry) => `${entry.message.role === 'user' ? '【作者】' : '【助手】'}\n${entry.message.content ?? ''}`,
    )
    .join('\n\n');
}

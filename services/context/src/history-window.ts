import type { ChatMessage, TraceExcluded, TraceLoaded } from '@quill/contracts';
import type { HistoryCompaction, HistoryMessage } from '@quill/db';
import type { TokenCounter } from './budget.ts';
import { COMPACTION_TARGET_SHARE } from './compaction.ts';
import { evictionCount, type RenderedTurnMessage, renderHistory, totalTokens } from './history.ts';
import { summaryMessage } from './render.ts';

/**
 * The history part of the prompt: [summary of compacted turns][the turns since]. Over its
 * allowance, old turns are compacted (summary + archive) down to half the allowance, so the
 * boundary moves rarely and the prefix stays cacheable between compactions; with compaction off
 * they are simply dropped, oldest first.
 * Pure: when turns must be compacted it says which, the caller compacts them (a model call and a
 * write, compaction.ts) and asks again with the new boundary.
 */
export interface HistoryWindowInput {
  runId: string;
  compaction: HistoryCompaction | null;
  /** The title of `compaction`'s archive file, when it has one that still exists. */
  archiveTitle: string | undefined;
  /** The session's messages after the loaded boundary (later ones are skipped past `compaction`'s). */
  stored: readonly HistoryMessage[];
  allowance: number;
  /** False on the second pass, after compacting: what still does not fit is dropped. */
  mayCompact: boolean;
  visibilityOf: (fileId: string) => string | undefined;
  count: TokenCounter;
}

export type HistoryPlan =
  | { kind: 'window'; window: HistoryWindow }
  | { kind: 'compact'; evicted: RenderedTurnMessage[] };

export interface HistoryWindow {
  messages: ChatMessage[];
  tokens: number;
  kept: number;
  compacted: number;
  dropped: number;
  archiveFileId: string | undefined;
  loaded: TraceLoaded[];
  excluded: TraceExcluded[];
}

// Room kept for the summary message when deciding how much to compact (at most a tenth).
const SUMMARY_RESERVE_TOKENS = 800;

export function planHistoryWindow(input: HistoryWindowInput): HistoryPlan {
  const { count } = input;
  const boundary = input.compaction;
  const throughSeq = boundary?.throughSeq ?? 0;
  // The current author message is sent as the turn itself, not as history; a boundary written
  // by this or a racing compile after the read hides what it covers.
  let rendered: RenderedTurnMessage[] = renderHistory(
    input.stored.filter((message) => message.runId !== input.runId && message.seq > throughSeq),
    input.visibilityOf,
    count,
  );
  const archiveId = boundary?.archiveFileId;
  const summary = boundary
    ? summaryMessage(
        boundary.summary,
        archiveId && input.archiveTitle ? { id: archiveId, title: input.archiveTitle } : null,
      )
    : null;
  const excluded: TraceExcluded[] = [];
  let dropped = 0;

  if (totalTokens(rendered) + (summary ? count(summary) : 0) > input.allowance) {
    if (input.mayCompact) {
      const summaryReserve = Math.min(SUMMARY_RESERVE_TOKENS, Math.floor(input.allowance * 0.1));
      const target = Math.max(0, Math.floor(input.allowance * COMPACTION_TARGET_SHARE) - summaryReserve);
      const evict = evictionCount(rendered, target);
      if (evict > 0) return { kind: 'compact', evicted: rendered.slice(0, evict) };
    }
    const room = input.allowance - (summary ? count(summary) : 0);
    const drop = totalTokens(rendered) > room ? evictionCount(rendered, room) : 0;
    if (drop > 0) {
      dropped = drop;
      excluded.push({
        source: 'history',
        title: `${drop} 条较早的消息`,
        reason: 'budget',
        detail: 'over the history allowance',
      });
      rendered = rendered.slice(drop);
    }
  }

  const messages: ChatMessage[] = [
    ...(summary ? [{ role: 'user' as const, content: summary }] : []),
    ...rendered.map((entry) => entry.message),
  ];
  const loaded: TraceLoaded[] = [];
  if (summary && boundary) {
    loaded.push({
      source: 'history_summary',
      ...(boundary.archiveFileId ? { file_id: boundary.archiveFileId } : {}),
      title: '此前对话摘要',
      shown_chars: summary.length,
      total_chars: summary.length,
      tokens: count(summary),
      full: false,
      permission: 'all',
    });
    excluded.push({
      source: 'history',
      ...(boundary.archiveFileId ? { file_id: boundary.archiveFileId } : {}),
      title: `${boundary.compactedMessages} 条已压缩的消息`,
      reason: 'compacted',
      detail: boundary.archiveFileId ? `full text archived in file ${boundary.archiveFileId}` : 'summarised',
    });
  }
  const keptChars = rendered.reduce((sum, entry) => sum + (entry.message.content?.length ?? 0), 0);
  loaded.push({
    source: 'history',
    title: '对话历史',
    shown_chars: keptChars,
    total_chars: keptChars,
    tokens: totalTokens(rendered),
    full: dropped === 0,
    permission: 'all',
  });
  const window: HistoryWindow = {
    messages,
    tokens: totalTokens(rendered) + (summary ? count(summary) : 0),
    kept: rendered.length,
    compacted: boundary?.compactedMessages ?? 0,
    dropped,
    archiveFileId: boundary?.archiveFileId ?? undefined,
    loaded,
    excluded,
  };
  return { kind: 'window', window };
}

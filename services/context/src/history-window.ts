import type { ChatMessage, TraceExcluded, TraceLoaded } from '@quill/contracts';
import { getFile, type HistoryCompaction, type HistoryMessage } from '@quill/db';
import type { TokenCounter } from './budget.ts';
import { COMPACTION_TARGET_SHARE, type CompactionDependencies, compactHistory } from './compaction.ts';
import { evictionCount, type RenderedTurnMessage, renderHistory, totalTokens } from './history.ts';
import { summaryMessage } from './render.ts';

/**
 * The history part of the prompt: [summary of compacted turns][the turns since]. Over its
 * allowance, old turns are compacted (summary + archive) down to half the allowance, so the
 * boundary moves rarely and the prefix stays cacheable between compactions; with compaction off
 * they are simply dropped, oldest first.
 */
export interface HistoryWindowInput {
  sessionId: string;
  projectId: string;
  runId: string;
  compaction: HistoryCompaction | null;
  /** The session's messages after `compaction`'s boundary (read by the caller, alongside the rest). */
  stored: readonly HistoryMessage[];
  allowance: number;
  compactionEnabled: boolean;
  visibilityOf: (fileId: string) => string | undefined;
  titleOf: (fileId: string) => string | undefined;
  count: TokenCounter;
}

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

export async function buildHistoryWindow(
  dependencies: CompactionDependencies,
  input: HistoryWindowInput,
): Promise<HistoryWindow> {
  const { count } = input;
  let boundary = input.compaction;
  // The current author message is sent as the turn itself, not as history.
  let rendered: RenderedTurnMessage[] = renderHistory(
    input.stored.filter((message) => message.runId !== input.runId),
    input.visibilityOf,
    count,
  );
  const summaryOf = async (compaction: HistoryCompaction | null) => {
    if (!compaction) return null;
    const archiveId = compaction.archiveFileId;
    // An archive this compile just created is not in the file list read before it.
    const title = archiveId
      ? (input.titleOf(archiveId) ?? (await getFile(dependencies.pool, input.projectId, archiveId))?.title)
      : undefined;
    return summaryMessage(compaction.summary, archiveId && title ? { id: archiveId, title } : null);
  };
  let summary = await summaryOf(boundary);
  const excluded: TraceExcluded[] = [];
  let dropped = 0;

  if (totalTokens(rendered) + (summary ? count(summary) : 0) > input.allowance) {
    if (input.compactionEnabled) {
      const summaryReserve = Math.min(SUMMARY_RESERVE_TOKENS, Math.floor(input.allowance * 0.1));
      const target = Math.max(0, Math.floor(input.allowance * COMPACTION_TARGET_SHARE) - summaryReserve);
      const evict = evictionCount(rendered, target);
      if (evict > 0) {
        boundary = await compactHistory(dependencies, {
          sessionId: input.sessionId,
          projectId: input.projectId,
          runId: input.runId,
          evicted: rendered.slice(0, evict),
          previous: boundary,
        });
        // A racing compile may have written a different boundary; it wins, we follow it.
        const throughSeq = boundary.throughSeq;
        rendered = rendered.filter((message) => message.seq > throughSeq);
        summary = await summaryOf(boundary);
      }
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
  return {
    messages,
    tokens: totalTokens(rendered) + (summary ? count(summary) : 0),
    kept: rendered.length,
    compacted: boundary?.compactedMessages ?? 0,
    dropped,
    archiveFileId: boundary?.archiveFileId ?? undefined,
    loaded,
    excluded,
  };
}

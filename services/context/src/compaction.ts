import { randomUUID } from 'node:crypto';
import type { TokenUsage } from '@quill/contracts';
import {
  getLatestCompaction,
  type HistoryCompaction,
  historyArchiveTitleOf,
  type Queryable,
  withTransaction,
} from '@quill/db';
import { saveCompaction } from '@quill/db/context';
import { collectChat, type LlmClient } from '@quill/llm';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { type RenderedTurnMessage, transcript } from './history.ts';

/**
 * History compaction (docs/agent-behaviour.md invariant 5): evicted turns are summarised by one model call
 * (role `summarize`) and their full text is kept for an archive file in the project, which the
 * summary names so the agent can read it back with query_files. The boundary is stored, so
 * every later compile reuses the same summary and the history prefix stays byte-identical. The
 * boundary names the archive file and holds its new section; the session's next step (a
 * worker, the writer of the AI's files) appends it to the file (docs/decisions/0022).
 */
/** After compacting, history is brought down to this share of its allowance (hysteresis). */
export const COMPACTION_TARGET_SHARE = 0.5;
const SUMMARY_INPUT_MAX_CHARS = 60_000;
const FALLBACK_SUMMARY_CHARS = 600;

const SUMMARY_INSTRUCTIONS = [
  '你负责压缩写作助手与作者的对话历史，供之后的对话继续使用。',
  '用中文写一段不超过 400 字的摘要：作者的要求与偏好、已完成的工作（写明文件标题与 id）、尚未完成的事项与约定。',
  '只写对话里出现过的事实，不要编造。',
].join('\n');

export interface CompactionDependencies {
  pool: Pool;
  llm: LlmClient | null;
  logger: Logger;
  /** Reports the summarising call's usage (billing counts every model call). */
  onUsage?: (usage: TokenUsage, provider: string, model: string) => Promise<void>;
}

export interface CompactionInput {
  sessionId: string;
  projectId: string;
  runId: string;
  evicted: readonly RenderedTurnMessage[];
  previous: HistoryCompaction | null;
}

export async function compactHistory(
  dependencies: CompactionDependencies,
  input: CompactionInput,
): Promise<HistoryCompaction> {
  const throughSeq = input.evicted.at(-1)!.seq;
  // One compactor per session at a time: a racing compile waits, then finds the boundary written.
  return withTransaction(dependencies.pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`compaction:${input.sessionId}`]);
    const latest = await getLatestCompaction(client, input.sessionId);
    if (latest && latest.throughSeq >= throughSeq) return latest;
    const text = transcript(input.evicted);
    const summary = await summarize(dependencies, input, text);
    const archiveFileId = await archiveFileFor(client, input);
    return saveCompaction(client, {
      sessionId: input.sessionId,
      throughSeq,
      summary,
      archiveFileId,
      archiveSection: archiveSection(input.evicted, text),
      compactedMessages: (input.previous?.compactedMessages ?? 0) + input.evicted.length,
    });
  });
}

async function summarize(
  dependencies: CompactionDependencies,
  input: CompactionInput,
  text: string,
): Promise<string> {
  const previous = input.previous ? `此前的摘要：\n${input.previous.summary}\n\n` : '';
  const body = text.length > SUMMARY_INPUT_MAX_CHARS ? `${text.slice(0, SUMMARY_INPUT_MAX_CHARS)}\n……` : text;
  if (dependencies.llm) {
    try {
      const result = await collectChat(
        dependencies.llm.streamChat({
          messages: [
            { role: 'system', content: SUMMARY_INSTRUCTIONS },
            { role: 'user', content: `${previous}需要压缩的对话：\n${body}` },
          ],
          role: 'summarize',
          runId: input.runId,
          sessionId: input.sessionId,
        }),
      );
      await dependencies.onUsage?.(result.usage, result.provider, result.model).catch((error: unknown) => {
        dependencies.logger.warn({ err: error }, 'summary usage not reported');
      });
      if (result.text.trim()) return result.text.trim();
    } catch (error) {
      dependencies.logger.warn(
        { err: error, session_id: input.sessionId },
        'history summary failed; using an excerpt',
      );
    }
  }
  // Without a model answer the archive still holds everything; the excerpt says where to look.
  const excerpt = text.length > FALLBACK_SUMMARY_CHARS ? `${text.slice(0, FALLBACK_SUMMARY_CHARS)}……` : text;
  return `${input.previous ? `${input.previous.summary}\n` : ''}（自动摘要不可用，以下为被压缩对话的开头）\n${excerpt}`;
}

/** The section the archive file gets for these evicted messages. */
function archiveSection(evicted: readonly RenderedTurnMessage[], text: string): string {
  return `## 消息 ${evicted[0]!.seq}–${evicted.at(-1)!.seq}（${evicted.length} 条）\n\n${text}`;
}

/**
 * The archive file a compaction appends to: the previous compaction's, unless the author deleted
 * it (then a new one, named now, created by the worker that writes the section).
 */
async function archiveFileFor(client: Queryable, input: CompactionInput): Promise<string> {
  const previous = input.previous?.archiveFileId;
  if (previous) {
    const title = await historyArchiveTitleOf(client, {
      projectId: input.projectId,
      sessionId: input.sessionId,
      fileId: previous,
    });
    if (title !== undefined) return previous;
  }
  return randomUUID();
}

import type { ChatMessage } from '@quill/contracts';
import type { PendingFile, ToolRunState } from '@quill/tools';
import { RUN_DIRECTIVE_HEADING } from './protocol.ts';

/**
 * The empty-file correction round (docs/ai-writes.md): a step whose model would end, hand off or
 * ask the author while a file it created is still empty gets one more call, by the same agent,
 * that asks for exactly that body. A body written in the same reply as `create_file` (before the
 * file existed) was shown as chat text and saved nowhere, so it is the same case. The round runs
 * once per file; the handoff or question the model already made stays and takes effect after it.
 */
export interface EmptyFileRound {
  /** Sees every reply: one that called create_file and also carried a `<file>` body broke the protocol. */
  observe(reply: { rawText: string; toolCalls: readonly { function: { name: string } }[] }): void;
  /**
   * Adds the correction to the transcript and returns true when it is due now. `withReply`: the
   * reply itself is not in the transcript yet (it had no tool calls) and goes in first.
   */
  due(state: ToolRunState, reply: { rawText: string }, messages: ChatMessage[], withReply: boolean): boolean;
  readonly corrected: readonly string[];
}

export function createEmptyFileRound(options: {
  enabled: boolean;
  corrected?: readonly string[];
}): EmptyFileRound {
  const corrected = new Set(options.corrected ?? []);
  let wroteInline = false;
  return {
    observe(reply) {
      if (
        reply.toolCalls.some((call) => call.function.name === 'create_file') &&
        /<file>/.test(reply.rawText)
      ) {
        wroteInline = true;
      }
    },
    due(state, reply, messages, withReply) {
      const pending = state.pendingFile;
      if (!options.enabled || !pending || corrected.has(pending.fileId)) return false;
      corrected.add(pending.fileId);
      if (withReply) messages.push({ role: 'assistant', content: reply.rawText || null });
      messages.push({ role: 'user', content: correctionDirective(pending, wroteInline) });
      return true;
    },
    get corrected() {
      return [...corrected];
    },
  };
}

export function correctionDirective(pending: PendingFile, wroteInline: boolean): string {
  const why = wroteInline
    ? '正文和 create_file 写在了同一次回复里，那时文件还不存在，所以没有保存。'
    : '你还没有写它的正文。';
  return `${RUN_DIRECTIVE_HEADING} 你用 create_file 建的「${pending.title}」(id=${pending.fileId}) 仍是空文件：${why}现在只回复这个文件的完整正文：以 <file> 开头，以 </file> 结尾，不要调用工具。`;
}

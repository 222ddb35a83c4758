import type { PendingFile } from '@quill/tools';
import { RUN_DIRECTIVE_HEADING } from './protocol.ts';

/**
 * The empty-file correction round (docs/ai-writes.md): a step whose model would end, hand off or
 * ask the author while a file it created is still empty gets one more call, by the same agent,
 * that asks for exactly that body. A body written in the same reply as `create_file` (before the
 * file existed) was shown as chat text and saved nowhere, so it is the same case. The round runs
 * once per file; the handoff or question the model already made stays and takes effect after it.
 * Pure: the step machine keeps the corrected files and the inline flag in its state.
 */

/** A reply that called create_file and also carried a `<file>` body broke the protocol. */
export function wroteBodyInline(reply: {
  rawText: string;
  toolCalls: readonly { function: { name: string } }[];
}): boolean {
  return reply.toolCalls.some((call) => call.function.name === 'create_file') && /<file>/.test(reply.rawText);
}

/**
 * The file a correction round is due for now, or undefined: the created file still waiting for
 * its body, when correction is enabled and that file had no round yet.
 */
export function correctionDueFor(
  enabled: boolean,
  pending: PendingFile | undefined,
  corrected: readonly string[],
): PendingFile | undefined {
  if (!enabled || !pending || corrected.includes(pending.fileId)) return undefined;
  return pending;
}

export function correctionDirective(pending: PendingFile, wroteInline: boolean): string {
  const why = wroteInline
    ? '正文和 create_file 写在了同一次回复里，那时文件还不存在，所以没有保存。'
    : '你还没有写它的正文。';
  return `${RUN_DIRECTIVE_HEADING} 你用 create_file 建的「${pending.title}」(id=${pending.fileId}) 仍是空文件：${why}现在只回复这个文件的完整正文：以 <file> 开头，以 </file> 结尾，不要调用工具。`;
}

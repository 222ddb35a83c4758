import type { ChatMessage } from '@quill/contracts';

/*
 * A reply cut by the provider's output limit (`finish_reason: "length"`) is not an answer: the
 * worker hands the partial reply back and asks the model to go on from the exact point where it
 * stopped (docs/agent-behaviour.md `output_truncation`), a bounded number of times. A cut inside a `<file>` body
 * continues that body, so the prompt forbids restarting the tag or repeating text.
 */
export const CONTINUATION_PROMPT =
  '你的上一条回复因输出长度上限被截断了。请从中断处逐字接着写，不要重复已经写出的内容，不要重新开头，' +
  '也不要重新输出已经打开的 <file> 标签；写完后照常收尾（正文写完要写 </file>）。\n' +
  'Your previous reply was cut off by the output length limit. Continue exactly where it stopped, ' +
  'without repeating or restarting anything (do not reopen an open <file> tag), then finish as usual.';

export interface TruncatedReply {
  finishReason: string;
  toolCalls: readonly unknown[];
}

/** A reply that ended at the length limit without calling tools needs a continuation. */
export function needsContinuation(reply: TruncatedReply): boolean {
  return reply.finishReason === 'length' && reply.toolCalls.length === 0;
}

/** What to append to the transcript: the partial reply as said, then the continuation request. */
export function continuationMessages(partialReply: string): ChatMessage[] {
  return [
    { role: 'assistant', content: partialReply },
    { role: 'user', content: CONTINUATION_PROMPT },
  ];
}

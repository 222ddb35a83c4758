import type { LlmCallResult, LlmEvent } from './types.ts';

/** Drains a `streamChat` generator, handing each event to `onEvent`, and returns its result. */
export async function collectChat(
  stream: AsyncGenerator<LlmEvent, LlmCallResult, undefined>,
  onEvent?: (event: LlmEvent) => void | Promise<void>,
): Promise<LlmCallResult> {
  while (true) {
    const next = await stream.next();
    if (next.done) return next.value;
    await onEvent?.(next.value);
  }
}

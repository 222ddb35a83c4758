/**
 * The chat-completions stream's wire form, as OpenAI-compatible providers send it: one `data:`
 * line per JSON chunk, a blank line after each event, and `data: [DONE]` at the end. Quill's own
 * SSE frames are encoded in libs/contracts; this is the provider's side, which the fake LLM
 * serves and the client's parser tests feed.
 */

/** One event carrying `payload` as it is (a parser test's broken payload included). */
export function providerSseData(payload: string): string {
  return `data: ${payload}\n\n`;
}

export function providerSseEvent(chunk: unknown): string {
  return providerSseData(JSON.stringify(chunk));
}

export const PROVIDER_SSE_DONE = providerSseData('[DONE]');

/**
 * The chat-completions stream's wire form, as OpenAI-compatible providers send it: one `data:`
 * line per JSON chunk, a blank line after each event, and `data: [DONE]` at the end. Quill's own
 * SSE frames are encoded in libs/contracts; this is the provider's side, which the fake LLM
 * serves and the client's parser tests feed.
 */
export function providerSseEvent(chunk: unknown): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export const PROVIDER_SSE_DONE = 'data: [DONE]\n\n';

import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';

export function openaiClient(baseURL: string): OpenAI {
  // No SDK retries: a scripted error must surface, not be retried into the next script step.
  return new OpenAI({ baseURL, apiKey: 'test-key', maxRetries: 0 });
}

export interface CollectedStream {
  chunks: ChatCompletionChunk[];
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
}

/** Streams one completion and assembles it the way a client would. */
export async function streamCompletion(
  client: OpenAI,
  messages: ChatCompletionMessageParam[],
  headers: Record<string, string>,
  includeUsage = true,
): Promise<CollectedStream> {
  const stream = await client.chat.completions.create(
    {
      model: 'quill-fake-1',
      messages,
      stream: true,
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    },
    { headers },
  );
  const collected: CollectedStream = { chunks: [], text: '', toolCalls: [], finishReason: null };
  for await (const chunk of stream) {
    collected.chunks.push(chunk);
    const choice = chunk.choices[0];
    if (!choice) continue;
    collected.text += choice.delta.content ?? '';
    for (const delta of choice.delta.tool_calls ?? []) {
      const call = collected.toolCalls[delta.index] ?? { id: '', name: '', arguments: '' };
      collected.toolCalls[delta.index] = call;
      if (delta.id) call.id = delta.id;
      if (delta.function?.name) call.name = delta.function.name;
      call.arguments += delta.function?.arguments ?? '';
    }
    if (choice.finish_reason) collected.finishReason = choice.finish_reason;
  }
  return collected;
}

import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createChunkWriter, preciseNow } from './chunk-writer.ts';
import type { CompletionPlan } from './completion-plan.ts';
import { waitUntil } from './pacer.ts';
import { PROVIDER_SSE_DONE, providerSseEvent } from './provider-sse.ts';

export interface StreamSettings {
  completionId: string;
  model: string;
  includeUsage: boolean;
  ttftMs: number;
  tokensPerSecond: number;
  signal: AbortSignal;
  /** Told of every content delta as it is stamped (the request log keeps them for benchmarks). */
  onContent?: (delta: string, emittedAt: number) => void;
  /** Hold the stream once this many characters of text are out, until `hold` resolves. */
  pause?: { atChars: number; hold: () => Promise<void> };
}

type Delta = Record<string, unknown>;

/** Gaps up to this use the shared pacer; longer ones a timer of their own that an abort ends. */
const SHARED_PACING_MAX_MS = 200;

/** Streams a planned completion in the exact `chat.completion.chunk` SSE format of OpenAI. */
export async function writeCompletionStream(
  response: ServerResponse,
  plan: CompletionPlan,
  settings: StreamSettings,
): Promise<void> {
  const { signal } = settings;
  const created = Math.floor(Date.now() / 1000);
  const lastChunkUsage = settings.includeUsage && plan.sendUsage && plan.usageStyle === 'last_chunk';
  const line = (delta: Delta, finishReason: string | null): string => {
    const chunk = {
      id: settings.completionId,
      object: 'chat.completion.chunk',
      created,
      model: settings.model,
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(settings.includeUsage && plan.usageStyle === 'openai' ? { usage: null } : {}),
      ...(lastChunkUsage && finishReason !== null ? { usage: plan.usage } : {}),
      // Not part of the OpenAI format: lets benchmarks measure how long Quill took to relay a token.
      x_emitted_at: preciseNow(),
    };
    if (typeof delta.content === 'string' && delta.content !== '') {
      settings.onContent?.(delta.content, chunk.x_emitted_at);
    }
    return providerSseEvent(chunk);
  };

  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const writer = createChunkWriter(response, signal, plan.writeBytes);
  await writer.push(line({ role: 'assistant', content: '', refusal: null }, null));
  await writer.flush();
  if (settings.ttftMs > 0) await sleep(settings.ttftMs, undefined, { signal });

  const deltas = tokenDeltas(plan);
  const interval = settings.tokensPerSecond > 0 ? 1000 / settings.tokensPerSecond : 0;
  const start = performance.now();
  let textOut = 0;
  let paused = settings.pause === undefined;
  for (const [index, delta] of deltas.entries()) {
    if (!paused && settings.pause && textOut >= settings.pause.atChars) {
      paused = true;
      await writer.flush();
      await settings.pause.hold();
    }
    if (typeof delta.content === 'string') textOut += delta.content.length;
    if (interval > 0) {
      // Due times are absolute, so a late timer catches up instead of slowing the whole stream.
      const dueAt = start + index * interval;
      const wait = dueAt - performance.now();
      if (wait >= 1) {
        await writer.flush();
        // Token gaps share one timer; a long gap (a slow scripted stream) still ends on abort.
        if (wait <= SHARED_PACING_MAX_MS) await waitUntil(dueAt);
        else await sleep(wait, undefined, { signal });
      }
    }
    await writer.push(line(delta, null));
  }
  await writer.flush();
  if (!paused && settings.pause) await settings.pause.hold();

  if (plan.disconnect) {
    disconnect(response, plan.disconnect);
    return;
  }
  await writer.push(line({}, plan.finishReason));
  if (settings.includeUsage && plan.sendUsage && plan.usageStyle === 'openai') {
    const usageChunk = {
      id: settings.completionId,
      object: 'chat.completion.chunk',
      created,
      model: settings.model,
      system_fingerprint: null,
      choices: [],
      usage: plan.usage,
      x_emitted_at: preciseNow(),
    };
    await writer.push(providerSseEvent(usageChunk));
  }
  await writer.push(PROVIDER_SSE_DONE);
  await writer.flush();
  response.end();
}

/** `close` ends the socket with a FIN; `reset` aborts it with a TCP RST, as a crashed proxy does. */
export function disconnect(response: ServerResponse, how: 'close' | 'reset'): void {
  const socket = response.socket;
  if (!socket) return;
  if (how === 'reset') socket.resetAndDestroy();
  else socket.destroy();
}

/** One delta per token: reasoning, then text, then each tool call (header, then argument pieces). */
function tokenDeltas(plan: CompletionPlan): Delta[] {
  const deltas: Delta[] = [];
  for (const token of plan.reasoningTokens) deltas.push({ [plan.reasoningField]: token });
  for (const token of plan.textTokens) deltas.push({ content: token });
  for (const [index, call] of plan.toolCalls.entries()) {
    deltas.push({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const piece of call.argumentPieces) {
      deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  }
  return deltas;
}

import { z } from 'zod';

/** Per-step pacing, overriding the request headers and the server options. */
const Pacing = {
  ttft_ms: z.number().nonnegative().optional(),
  tokens_per_second: z.number().nonnegative().optional(),
};

export const ScriptedToolCall = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()),
});
export type ScriptedToolCall = z.infer<typeof ScriptedToolCall>;

/**
 * An HTTP error answered before any token, like a provider that is down (5xx), overloaded (429),
 * or refusing the key (401 invalid key, 402 out of credit, 403 no access). Without `body` the
 * error object is the one such providers send for that status (see provider-errors.ts).
 */
export const ErrorStep = z.object({
  error: z.object({
    status: z.number().int().min(400).max(599),
    body: z.record(z.string(), z.unknown()).optional(),
    /** `retry-after` as sent: seconds (`"2"`) or an HTTP-date; a number is seconds. */
    retry_after: z.union([z.number().nonnegative(), z.string().min(1)]).optional(),
    /** OpenAI's millisecond variant, `retry-after-ms`. */
    retry_after_ms: z.number().nonnegative().optional(),
  }),
  ...Pacing,
});
export type ErrorStep = z.infer<typeof ErrorStep>;

export const TextStep = z.object({
  text: z.string().default(''),
  /** Streamed as reasoning deltas before the text, as reasoning models do. */
  reasoning: z.string().optional(),
  /** The delta field reasoning arrives in: DeepSeek/Qwen/vLLM `reasoning_content`, OpenRouter/Ollama `reasoning`. */
  reasoning_field: z.enum(['reasoning_content', 'reasoning']).optional(),
  /**
   * Cuts reasoning, text and tool-call arguments into deltas of at most this many characters,
   * ignoring token boundaries (1: every `<file>` tag and every JSON argument split at every character).
   */
  delta_chars: z.number().int().min(1).optional(),
  /**
   * Writes the SSE bytes in pieces of this many bytes, each its own socket write (1: a break at
   * every byte, in the middle of every multi-byte UTF-8 character and of every JSON line).
   */
  write_bytes: z.number().int().min(1).optional(),
  /**
   * `openai` (default): every chunk carries `usage: null` and a last chunk with no choices
   * carries the usage. `last_chunk`: only the finish chunk carries it, as several compatible
   * servers do.
   */
  usage_style: z.enum(['openai', 'last_chunk']).optional(),
  /** The model the chunks name, as a provider answering with a dated variant of the one asked for. */
  response_model: z.string().min(1).optional(),
  tool_calls: z.array(ScriptedToolCall).optional(),
  finish_reason: z.enum(['stop', 'length', 'tool_calls']).optional(),
  /** Omits the final usage chunk even when the client asked for it. */
  no_usage: z.boolean().optional(),
  /** Streams this many characters of `text`, then destroys the socket mid-stream. */
  disconnect_after_chars: z.number().int().nonnegative().optional(),
  /** Streams this many characters of `reasoning` (no text), then destroys the socket. */
  disconnect_after_reasoning_chars: z.number().int().nonnegative().optional(),
  /** How a scripted disconnect ends the socket: `close` (FIN) or `reset` (TCP RST). */
  disconnect_how: z.enum(['close', 'reset']).optional(),
  /** Holds the stream at the named gate once this many characters of `text` are out (see gates.ts). */
  pause: z.string().min(1).optional(),
  pause_at_chars: z.number().int().nonnegative().optional(),
  ...Pacing,
});
export type TextStep = z.infer<typeof TextStep>;

// Error first: a text step has only optional fields, so it would also accept `{ error }`.
export const Step = z.union([ErrorStep, TextStep]);
export type Step = z.infer<typeof Step>;

export const ScriptMatch = z.object({
  run_id: z.string().optional(),
  role: z.string().optional(),
});
export type ScriptMatch = z.infer<typeof ScriptMatch>;

export const Script = z.object({
  match: ScriptMatch.default({}),
  responses: z.array(Step).min(1),
  /** Once the responses run out, matching requests get HTTP 500 `script exhausted`. */
  strict: z.boolean().default(false),
});
/** What callers send (defaults not yet applied). */
export type ScriptInput = z.input<typeof Script>;
export type Script = z.infer<typeof Script>;

export function isErrorStep(step: Step): step is ErrorStep {
  return 'error' in step;
}

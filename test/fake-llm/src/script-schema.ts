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

/** An HTTP error answered before any token, like a provider that is down or overloaded. */
export const ErrorStep = z.object({
  error: z.object({
    status: z.number().int().min(400).max(599),
    body: z.record(z.string(), z.unknown()).optional(),
  }),
  ...Pacing,
});
export type ErrorStep = z.infer<typeof ErrorStep>;

export const TextStep = z.object({
  text: z.string().default(''),
  /** Streamed as `reasoning_content` deltas before the text, as reasoning models do. */
  reasoning: z.string().optional(),
  tool_calls: z.array(ScriptedToolCall).optional(),
  finish_reason: z.enum(['stop', 'length', 'tool_calls']).optional(),
  /** Omits the final usage chunk even when the client asked for it. */
  no_usage: z.boolean().optional(),
  /** Streams this many characters of `text`, then destroys the socket mid-stream. */
  disconnect_after_chars: z.number().int().nonnegative().optional(),
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

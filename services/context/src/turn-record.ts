import { TraceExcluded, TraceLoaded } from '@quill/contracts';
import { z } from 'zod';

/**
 * The run's turn context as stored (docs/agent-behaviour.md 「本轮上下文」): built at the run's first
 * compile from what every role may see, then reused byte-identically by every later step and
 * role, so their prompts share one cacheable prefix up to and including `</turn_context>`. What
 * was loaded for it is kept too, so every step's Context Trace still lists it.
 */
const TracePart = z.object({ loaded: z.array(TraceLoaded), excluded: z.array(TraceExcluded) });

export const TurnRecord = z.object({
  v: z.literal(1),
  /** The rendered `<turn_context>…</turn_context>`. */
  text: z.string(),
  /** Its tokens, counted by parts when it was built. */
  tokens: z.number().int().nonnegative(),
  /** The tokens of the project context inside it. */
  contextTokens: z.number().int().nonnegative(),
  /** The focus file as the turn context names it; null when every role may not see it. */
  currentFile: z.string().nullable(),
  /** The files it shows by reference to the working set: every step keeps them there. */
  workingSetIds: z.array(z.string()),
  context: TracePart,
  skills: TracePart,
});
export type TurnRecord = z.infer<typeof TurnRecord>;

/** A stored record that does not parse (an older shape) is rebuilt, never trusted. */
export function parseTurnRecord(value: unknown): TurnRecord | null {
  const parsed = TurnRecord.safeParse(value);
  return parsed.success ? parsed.data : null;
}

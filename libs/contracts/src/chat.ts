import { z } from 'zod';

/** Provider-neutral chat messages (the OpenAI Chat Completions shape, which every provider speaks). */
export const ToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCall>;

export const ChatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCall).optional(),
  }),
  z.object({ role: z.literal('tool'), content: z.string(), tool_call_id: z.string() }),
]);
export type ChatMessage = z.infer<typeof ChatMessage>;

export const UsageSource = z.enum(['provider', 'estimate']);
export type UsageSource = z.infer<typeof UsageSource>;

export const TokenUsage = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
  usage_source: UsageSource,
});
export type TokenUsage = z.infer<typeof TokenUsage>;

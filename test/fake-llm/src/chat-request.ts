import { z } from 'zod';

/** The parts of an OpenAI chat completion request the fake reads; everything else is kept as sent. */
export const ChatRequestMessage = z.looseObject({
  role: z.string(),
  content: z.unknown().optional(),
  tool_calls: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }) })).optional(),
});
export type ChatRequestMessage = z.infer<typeof ChatRequestMessage>;

export const ChatRequestBody = z.looseObject({
  model: z.string().optional(),
  messages: z.array(ChatRequestMessage).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
});
export type ChatRequestBody = z.infer<typeof ChatRequestBody>;

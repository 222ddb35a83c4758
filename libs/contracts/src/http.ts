import { z } from 'zod';
import { GenerationMode, UiLanguage } from './roles.ts';

/** HTTP bodies (gateway). zod errors become 400 with the offending fields named. */
export const MAX_MESSAGE_CHARS = 20_000;

export const AgentStreamBody = z.strictObject({
  project_id: z.uuid(),
  session_id: z.uuid().optional(),
  message: z.string().trim().min(1).max(MAX_MESSAGE_CHARS),
  focus_file_id: z.uuid().optional(),
  attached_file_ids: z.array(z.uuid()).max(20).default([]),
  generation_mode: GenerationMode.default('fast'),
  ui_language: UiLanguage.default('zh'),
});
export type AgentStreamBody = z.infer<typeof AgentStreamBody>;

export const RunIdParams = z.object({ runId: z.uuid() });
export const LastEventId = z.coerce.number().int().nonnegative();

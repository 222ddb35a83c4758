import type { CompletionPlan } from './completion-plan.ts';

/** The non-streaming `chat.completion` object for a planned completion. */
export function buildCompletion(plan: CompletionPlan, completionId: string, model: string) {
  const text = plan.textTokens.join('');
  const reasoning = plan.reasoningTokens.join('');
  const toolCalls = plan.toolCalls.map((call) => ({
    id: call.id,
    type: 'function' as const,
    function: { name: call.name, arguments: call.argumentPieces.join('') },
  }));
  return {
    id: completionId,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          refusal: null,
          ...(reasoning === '' ? {} : { [plan.reasoningField]: reasoning }),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: plan.finishReason,
      },
    ],
    usage: plan.usage,
  };
}

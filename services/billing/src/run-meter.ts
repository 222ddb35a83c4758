import type { SseFrame, StepResult, UsageEnvelope, UsageSource } from '@quill/contracts';

/**
 * The run meter (docs/agent-behaviour.md 「调试」, core/run_meter.py): a per-run summary logged with every
 * settlement and stored on the settlement row. It is computed from what the run published —
 * frames, step results and provider usage — so it connects the usage meter to billing (docs/agent-behaviour.md
 * 坑 9) instead of trusting a counter some process kept in memory.
 */
export interface RunMeter {
  run_steps: number;
  /** Model calls that returned: the larger of the step results' count and the usage reports. */
  run_model_calls: number;
  run_tool_calls: number;
  run_tool_errors: number;
  /** Consecutive model calls answered by a different provider than the one before. */
  run_failovers: number;
  run_files_saved: number;
  run_frames: number;
  /** run_started → terminal frame. */
  run_duration_ms: number | null;
  /** run_started → the first text or file body the author saw. */
  run_first_output_ms: number | null;
  run_prompt_tokens: number;
  run_completion_tokens: number;
  run_total_tokens: number;
  run_usage_source: UsageSource | 'mixed' | 'none';
}

export interface RunRecord {
  frames: readonly SseFrame[];
  steps: readonly StepResult[];
  usage: readonly UsageEnvelope[];
}

export function meterRun(record: RunRecord, terminal: SseFrame | undefined): RunMeter {
  const { frames, steps } = record;
  const usage = uniqueCalls(record.usage);
  const started = frames.find((value) => value.type === 'run_started');
  const firstOutput = frames.find(
    (value) => (value.type === 'text' && value.content.trim() !== '') || value.type === 'file_delta',
  );
  const sources = new Set(usage.map((call) => call.usage.usage_source));
  const stepCalls = steps.reduce((sum, step) => sum + step.model_calls, 0);
  return {
    run_steps: steps.length,
    run_model_calls: Math.max(stepCalls, usage.length),
    run_tool_calls: frames.filter((value) => value.type === 'tool_call').length,
    run_tool_errors: frames.filter((value) => value.type === 'tool_result' && value.status === 'error')
      .length,
    run_failovers: usage.filter((call, index) => index > 0 && call.provider !== usage[index - 1]!.provider)
      .length,
    run_files_saved: frames.filter((value) => value.type === 'file_saved').length,
    run_frames: frames.length,
    run_duration_ms: elapsed(started, terminal),
    run_first_output_ms: elapsed(started, firstOutput),
    run_prompt_tokens: usage.reduce((sum, call) => sum + call.usage.prompt_tokens, 0),
    run_completion_tokens: usage.reduce((sum, call) => sum + call.usage.completion_tokens, 0),
    run_total_tokens: usage.reduce((sum, call) => sum + call.usage.total_tokens, 0),
    run_usage_source: sources.size === 0 ? 'none' : sources.size > 1 ? 'mixed' : [...sources][0]!,
  };
}

/** One report per (call index, attempt), in call order: a re-published report counts once. */
function uniqueCalls(usage: readonly UsageEnvelope[]): UsageEnvelope[] {
  const byCall = new Map<string, UsageEnvelope>();
  for (const call of usage) byCall.set(`${call.call_index}:${call.attempt}`, call);
  return [...byCall.values()].sort((a, b) => a.call_index - b.call_index || a.attempt - b.attempt);
}

function elapsed(from: SseFrame | undefined, to: SseFrame | undefined): number | null {
  if (!from || !to) return null;
  const milliseconds = Date.parse(to.ts) - Date.parse(from.ts);
  return Number.isFinite(milliseconds) ? Math.max(0, milliseconds) : null;
}

import type { SseFrame } from '@quill/contracts';
import type { FinishRunInput } from '@quill/db';

/**
 * What a run's row becomes once its stream has ended, from the terminal frame the author saw;
 * the same phases the finisher records, and its session follows it (docs/architecture.md
 * "Phases"). Pure, for the sweep: a run whose router could not write its row (a database blip,
 * a dead router after the gateway ended the stream) still reaches its terminal phase.
 */
export function runEndingFromFrame(terminal: SseFrame): FinishRunInput | undefined {
  if (terminal.type === 'workflow_complete') return { phase: 'done', stopReason: 'completed' };
  if (terminal.type === 'workflow_stopped') {
    return {
      phase: terminal.reason === 'waiting_user' ? 'waiting_user' : 'done',
      stopReason: terminal.reason,
    };
  }
  if (terminal.type === 'error') return { phase: 'error', stopReason: 'error', errorCode: terminal.code };
  return undefined;
}

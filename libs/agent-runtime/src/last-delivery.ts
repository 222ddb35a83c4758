import { type Bus, publishEnvelope } from '@quill/bus';
import { msgIds, StepRecordEnvelope, type StepResult, type TaskEnvelope } from '@quill/contracts';
import type { Logger } from 'pino';
import { classifyStepError } from './step-shell.ts';
import { markStepSpan } from './step-span.ts';

/**
 * The last delivery of a task failed: JetStream will not deliver it again, so the step is
 * reported failed on `run.<id>.steps` and the router ends the run with one `error` frame instead
 * of waiting for the wall clock (README "Fault tolerance"). The code is the one the same fault
 * gets inside a step (a database fault `storage_unavailable`, anything else `internal_error`);
 * both are infrastructure codes, so billing refunds the run. The result's msg id is the step's
 * result id, so a result the step published itself is not stored twice.
 */
export async function reportLastDeliveryFailed(
  dependencies: { bus: Bus; logger: Logger; instanceId: string },
  task: TaskEnvelope,
  delivery: { deliveryCount: number },
  error: unknown,
): Promise<void> {
  const failure = classifyStepError(error);
  // A lost write lease means a later holder owns the step; on a last delivery none can, so the
  // step is still reported rather than left to the wall clock.
  const code = failure.kind === 'error' ? failure.code : 'internal_error';
  const result: StepResult = {
    step: task.step,
    role: task.role,
    worker_instance: dependencies.instanceId,
    outcome: 'failed',
    stop_reason: 'error',
    error_code: code,
    final_text: '',
    files_written: [],
    model_calls: 0,
    tool_calls: 0,
  };
  dependencies.logger.error(
    {
      err: error,
      run_id: task.run_id,
      step: task.step,
      delivery: delivery.deliveryCount,
      error_code: code,
    },
    'last delivery of the task failed; step reported failed',
  );
  markStepSpan(result);
  await publishEnvelope(
    dependencies.bus,
    dependencies.bus.names.steps(task.run_id),
    StepRecordEnvelope,
    { v: 1, kind: 'result', run_id: task.run_id, result },
    { msgId: msgIds.stepResult(task.run_id, task.step) },
  );
}

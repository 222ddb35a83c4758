import { type Bus, requestReply } from '@quill/bus';
import {
  type ChatMessage,
  ContextCompileReply,
  ContextCompileRequest,
  type ErrorCode,
  isReplicaFailure,
  type TaskEnvelope,
} from '@quill/contracts';
import type { Logger } from 'pino';

/**
 * The step's compiled context (and whether its session's history was ever compacted, when the
 * context service said), or the code the step fails with when there is none.
 */
export type StepContext = { messages: ChatMessage[]; compacted?: boolean } | { failure: ErrorCode };

/** What the worker asks `context.compile` for one task: the task is the reference. */
export function compileRequestOf(task: TaskEnvelope, redelivered: boolean): ContextCompileRequest {
  return {
    v: 1,
    run_id: task.run_id,
    session_id: task.session_id,
    project_id: task.project_id,
    user_id: task.user_id,
    role: task.role,
    step: task.step,
    ...task.context,
    ...(redelivered ? { reuse: true } : {}),
  };
}

/**
 * Asks the context service for the task's step (dispatch by reference,
 * docs/decisions/0033-dispatch-by-reference.md), while the rest of the step's set-up is read.
 * Never rejects: no replica answering before the deadline is `context_unavailable`, a refusal is
 * its own code; the step then fails with it and the router ends the run with one error frame.
 */
export function compileStepContext(
  dependencies: { bus: Bus; logger: Logger; requestTimeoutMs: number; requestDeadlineMs: number },
  task: TaskEnvelope,
  redelivered: boolean,
): Promise<StepContext> {
  const { bus } = dependencies;
  return requestReply(
    bus,
    bus.names.contextCompile,
    { request: ContextCompileRequest, reply: ContextCompileReply },
    compileRequestOf(task, redelivered),
    // Compiling only reads (and stores idempotent rows): a replica that died or failed
    // mid-compile is asked again, another one if it is gone.
    {
      timeoutMs: dependencies.requestTimeoutMs,
      deadlineMs: dependencies.requestDeadlineMs,
      retryReply: isReplicaFailure,
    },
  ).then(
    (compiled): StepContext =>
      compiled.ok
        ? {
            messages: compiled.messages,
            ...(compiled.compacted === undefined ? {} : { compacted: compiled.compacted }),
          }
        : { failure: compiled.code },
    (error: unknown): StepContext => {
      dependencies.logger.error({ err: error }, 'context compile failed');
      return { failure: 'context_unavailable' };
    },
  );
}

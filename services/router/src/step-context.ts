import { requestReply } from '@quill/bus';
import {
  type AgentRole,
  type ChatMessage,
  ContextCompileReply,
  ContextCompileRequest,
  isReplicaFailure,
  type RunStartEnvelope,
} from '@quill/contracts';
import type { Logger } from 'pino';
import type { FinisherDependencies } from './run-finisher.ts';
import type { FinishOutcome } from './workflow.ts';

/** A step's compiled context, or how the run ends when it could not be compiled. */
export type StepContext = { messages: ChatMessage[] } | { failure: FinishOutcome };

/** A compile asked for before its step was dispatched; never rejects. */
export interface PendingStepContext {
  step: number;
  role: AgentRole;
  context: Promise<StepContext>;
}

/**
 * Asks the context service for one step's context. Never rejects: a compile that failed is the
 * run's `context_unavailable` (or the service's own code).
 */
export function compileStepContext(
  dependencies: Pick<FinisherDependencies, 'bus' | 'requestTimeoutMs' | 'requestDeadlineMs'> & {
    logger: Logger;
  },
  start: RunStartEnvelope,
  step: number,
  role: AgentRole,
): PendingStepContext {
  const { bus } = dependencies;
  const context = requestReply(
    bus,
    bus.names.contextCompile,
    { request: ContextCompileRequest, reply: ContextCompileReply },
    {
      v: 1,
      run_id: start.run_id,
      session_id: start.session_id,
      project_id: start.project_id,
      user_id: start.user_id,
      role,
      message: start.message,
      focus_file_id: start.focus_file_id,
      attached_file_ids: start.attached_file_ids,
      ui_language: start.ui_language,
      step,
    },
    // Compiling only reads (and stores a compaction boundary idempotently): a replica that
    // died or failed mid-compile is asked again, another one if it is gone.
    {
      timeoutMs: dependencies.requestTimeoutMs,
      deadlineMs: dependencies.requestDeadlineMs,
      retryReply: isReplicaFailure,
    },
  ).then(
    (compiled): StepContext =>
      compiled.ok ? { messages: compiled.messages } : { failure: { terminal: 'error', code: compiled.code } },
    (error: unknown): StepContext => {
      dependencies.logger.error({ err: error, run_id: start.run_id }, 'context compile failed');
      return { failure: { terminal: 'error', code: 'context_unavailable' } };
    },
  );
  return { step, role, context };
}

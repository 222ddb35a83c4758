import type { MessageView, ProjectView, SessionView } from '@quill/contracts';
import type { ProjectMembership, RunSummary, Session, SessionMessage } from '@quill/db';

/** Response bodies of the product API, from the repositories' rows (libs/contracts product.ts). */
export function projectView({ project, memberRole }: ProjectMembership): ProjectView {
  return {
    id: project.id,
    title: project.title,
    project_type: project.projectType,
    language: project.language as ProjectView['language'],
    role: memberRole,
    archived: project.archivedAt !== null,
    created_at: project.createdAt,
    updated_at: project.updatedAt,
  };
}

export function sessionView(session: Session): SessionView {
  return {
    session_id: session.sessionId,
    project_id: session.projectId,
    title: session.title,
    phase: session.phase,
    clarification_pending: session.clarificationPending,
    // Every message and phase change touches updated_at (libs/db messages.ts, sessions.ts).
    last_activity_at: session.updatedAt,
    created_at: session.createdAt,
    updated_at: session.updatedAt,
  };
}

/**
 * Which terminal frame a finished run sent, from what the router stored with it
 * (services/router run-finisher.ts): `completed` is workflow_complete, an error phase is error,
 * any other stop reason a workflow_stopped; a run still going has none yet.
 */
export function terminalOf(run: { phase: string; stopReason: string | null }) {
  if (run.phase === 'error') return 'error' as const;
  if (run.stopReason === null) return null;
  return run.stopReason === 'completed' ? ('workflow_complete' as const) : ('workflow_stopped' as const);
}

export function messageView(message: SessionMessage): MessageView {
  const crumbs = message.breadcrumbs;
  const fileOperations = crumbs
    ? (['created', 'edited', 'deleted', 'read'] as const).flatMap((op) =>
        (crumbs[op] ?? []).map((ref) => ({ op, file_id: ref.file_id, title: ref.title })),
      )
    : [];
  return {
    id: message.id,
    role: message.role,
    content: message.content,
    run_id: message.runId,
    created_at: message.createdAt,
    ...(message.run
      ? {
          run: {
            phase: message.run.phase,
            stop_reason: message.run.stopReason,
            terminal: terminalOf(message.run),
            error_code: message.run.errorCode,
          },
        }
      : {}),
    file_operations: fileOperations,
  };
}

export function runSummaryView(run: RunSummary) {
  return {
    run_id: run.runId,
    phase: run.phase,
    stop_reason: run.stopReason,
    terminal: terminalOf(run),
    error_code: run.errorCode,
    billing_decision: run.billingDecision,
    created_at: run.createdAt,
    ended_at: run.endedAt,
  };
}

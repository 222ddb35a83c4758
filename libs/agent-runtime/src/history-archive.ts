import type { TaskEnvelope } from '@quill/contracts';
import { writeHistoryArchive } from '@quill/db/workers';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

/** The step's write of its session's history archive: started once, awaited where it matters. */
export interface HistoryArchiveWrite {
  /** Starts the write (once); called right after the step's first model request is sent. */
  start(): void;
  /** Resolves once the write ended (starting it if it was not); never rejects. */
  settled(): Promise<void>;
}

/**
 * A compaction stored by the context service names the session's archive file and keeps its
 * section; the step writes it (docs/decisions/0022-two-writer-tables-and-their-guards.md). It is
 * started after the model request went out, so it is never on the way to the first token, and
 * awaited before the step's first tool call (the summary in this step's prompt tells the model
 * to read the archive with query_files) and before the step ends. A failure is logged and left to
 * the session's next step, which finds the section still unwritten. A session whose history was
 * never compacted (the compile said so) has no section: nothing is read.
 */
export function createHistoryArchiveWrite(
  pool: Pool,
  task: TaskEnvelope,
  log: Logger,
  session: { compacted?: boolean | undefined } = {},
): HistoryArchiveWrite {
  let running: Promise<void> | undefined;
  const start = () => {
    if (session.compacted === false) running ??= Promise.resolve();
    running ??= writeHistoryArchive(pool, {
      sessionId: task.session_id,
      projectId: task.project_id,
      runId: task.run_id,
    }).then(
      (files) => {
        if (files.length > 0) log.info({ files }, 'history archive written');
      },
      (error: unknown) => log.warn({ err: error }, 'history archive not written; left to the next step'),
    );
    return running;
  };
  return {
    start() {
      void start();
    },
    settled: start,
  };
}

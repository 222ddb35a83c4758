import { type Bus, publishFrame, readStored } from '@quill/bus';
import { EventEnvelope, errorFrame, frame, isTerminalFrame, msgIds } from '@quill/contracts';
import { finishRun, getActiveRunForSession, getRun, setSessionPhase } from '@quill/db';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from 'pg';

/**
 * The gateway's last resort for the terminal guarantee: past the deadline with no router left to
 * finish the run, it sends the terminal frame and `done` itself. It reads what the run already
 * stored first, because msg-id dedupe only covers the stream's duplicate window and a late
 * second terminal frame must never reach an author. A run it ends itself also gets its row and
 * session out of `running`; its settlement is left to billing's reconciliation (README "Fault
 * tolerance"), which also finishes the row of a run whose router sent the terminal but died.
 */
export async function endRunIfUnfinished(
  bus: Bus,
  pool: Pool,
  runId: string,
  logger: FastifyBaseLogger,
): Promise<void> {
  const stored = await readStored(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.events(runId),
    schema: EventEnvelope,
  });
  const frames = stored.flatMap((item) => (item.envelope ? [item.envelope.frame] : []));
  if (frames.some((value) => value.type === 'done')) return;
  if (!frames.some(isTerminalFrame)) {
    logger.error({ run_id: runId }, 'no terminal frame by the deadline; ending the run from the gateway');
    await publishFrame(bus, errorFrame(runId, 'worker_lost'), { msgId: msgIds.terminal(runId) });
    await finishAbandonedRow(pool, runId);
  }
  await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
}

async function finishAbandonedRow(pool: Pool, runId: string): Promise<void> {
  const ended = await finishRun(pool, runId, {
    phase: 'error',
    stopReason: 'error',
    errorCode: 'worker_lost',
  });
  const run = ended ? await getRun(pool, runId) : null;
  // A lapsed session lock may have let the author's next run start: that one owns the session.
  if (run && !(await getActiveRunForSession(pool, run.sessionId)))
    await setSessionPhase(pool, run.sessionId, 'idle');
}

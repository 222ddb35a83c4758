import { type Bus, decodeEnvelope, lastStored, publishFrame, readRunFramesAndSteps } from '@quill/bus';
import { EventEnvelope, errorFrame, frame, isTerminalFrame, msgIds, type SseFrame } from '@quill/contracts';
import { listRunningRunsOlderThan, listUnarchivedEndedRuns, withAdvisoryLockPass } from '@quill/db';
import { copySettledDecisions } from '@quill/db/router';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { PhaseWriter } from './phase-writer.ts';
import { archiveRun } from './run-archive.ts';
import { runEndingFromFrame } from './run-ending.ts';

export interface SweepSettings {
  intervalMs: number;
  /** A run is left to its router this long after it ended or started. */
  minAgeSeconds: number;
  /** Past its start, a run no router or gateway ended is ended here (`worker_lost`). */
  abandonedAfterSeconds: number;
  batch: number;
}

export interface SweepReport {
  /** False when another replica held the pass. */
  ran: boolean;
  finished: number;
  ended: number;
  decisions: number;
  archived: number;
  failed: number;
}

// One pass at a time across every router replica: a session-level advisory lock, released with
// the connection if the replica dies mid-pass (PostgreSQL "Advisory Locks").
const SWEEP_LOCK_KEY = 'quill.router.sweep';

/**
 * The router's sweep of the run rows it owns (docs/architecture.md "What each service owns"),
 * for what no router finished: a row still `idle`/`running` whose stream ended (the gateway's
 * last resort, a router that died after the terminal frame) gets the phase its terminal frame
 * says; a stream nobody ended past the run's deadline is ended (`error(worker_lost)`, `done`);
 * billing's decisions for runs billing settled by itself are copied onto the rows; ended runs are
 * archived. Every step is idempotent, so a pass racing a router changes nothing.
 */
export function createRunSweep(
  dependencies: { bus: Bus; pool: Pool; logger: Logger; phases: PhaseWriter },
  settings: SweepSettings,
) {
  const { bus, pool, logger, phases } = dependencies;

  async function runOnce(): Promise<SweepReport> {
    const report: SweepReport = { ran: false, finished: 0, ended: 0, decisions: 0, archived: 0, failed: 0 };
    report.ran = await withAdvisoryLockPass(pool, SWEEP_LOCK_KEY, async () => {
      await finishEndedStreams(report);
      report.decisions = await copySettledDecisions(pool, settings.batch);
      await archiveEnded(report);
    });
    return report;
  }

  async function finishEndedStreams(report: SweepReport): Promise<void> {
    const open = await listRunningRunsOlderThan(pool, {
      minAgeSeconds: settings.minAgeSeconds,
      limit: settings.batch,
    });
    for (const run of open) {
      try {
        const age = (Date.now() - Date.parse(run.createdAt)) / 1000;
        // Most of these are runs in progress: their newest frame says so, and their whole stream
        // (one frame per token) is read only when it ended or was abandoned. A frame stored after
        // `done` (a worker that lost the run) leaves that run to the pass after its deadline.
        if (age < settings.abandonedAfterSeconds && !(await endsWithDone(run.runId))) continue;
        let frames = await storedFrames(run.runId, run.createdAt);
        if (!frames.some((value) => value.type === 'done')) {
          if (age < settings.abandonedAfterSeconds) continue;
          await endAbandonedStream(run.runId, frames);
          report.ended++;
          frames = await storedFrames(run.runId, run.createdAt);
        }
        const terminal = frames.find(isTerminalFrame);
        const ending = terminal ? runEndingFromFrame(terminal) : undefined;
        if (!ending) continue;
        const write = await phases.endRun(
          run,
          ending,
          ending.phase === 'waiting_user' ? { clarificationPending: true } : {},
        );
        if (write.kind === 'applied') {
          report.finished++;
          logger.warn({ run_id: run.runId, phase: ending.phase }, 'swept the phase of an ended run');
        }
      } catch (error) {
        report.failed++;
        logger.error({ err: error, run_id: run.runId }, 'could not sweep an open run');
      }
    }
  }

  async function archiveEnded(report: SweepReport): Promise<void> {
    const ended = await listUnarchivedEndedRuns(pool, { minAgeSeconds: 0, limit: settings.batch });
    for (const { runId, createdAt } of ended) {
      try {
        // Read from the run's launch, not the stream's first message (docs/decisions/0075).
        if ((await archiveRun(bus, pool, runId, undefined, { launchedAt: createdAt })) === 'archived')
          report.archived++;
      } catch (error) {
        report.failed++;
        logger.error({ err: error, run_id: runId }, 'could not archive an ended run');
      }
    }
  }

  /** The run's frames, read from its launch time (docs/decisions/0075). */
  async function storedFrames(runId: string, launchedAt: string): Promise<SseFrame[]> {
    const { frames } = await readRunFramesAndSteps(bus, runId, { launchedAt });
    return frames.map((item) => item.frame);
  }

  /** Whether the run's newest stored frame is `done`: one direct get from the stream's end. */
  async function endsWithDone(runId: string): Promise<boolean> {
    const subject = bus.names.events(runId);
    const last = await lastStored(bus, { stream: bus.names.streams.events, subject });
    if (!last) return false;
    try {
      return decodeEnvelope(EventEnvelope, subject, last.data).frame.type === 'done';
    } catch {
      // An unreadable newest message: the whole read below decides.
      return true;
    }
  }

  /** Past the deadline with nobody left to end it: the frames the gateway's last resort would send. */
  async function endAbandonedStream(runId: string, frames: SseFrame[]): Promise<void> {
    logger.error({ run_id: runId }, 'run abandoned past its deadline; ending its stream');
    if (!frames.some(isTerminalFrame)) {
      await publishFrame(bus, errorFrame(runId, 'worker_lost'), { msgId: msgIds.terminal(runId) });
    }
    await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
  }

  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      passing = runOnce()
        .then((report) => {
          if (report.finished || report.ended || report.decisions || report.archived || report.failed)
            logger.info(report, 'run sweep pass');
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'run sweep pass failed'))
        .finally(schedule);
    }, settings.intervalMs);
    timer.unref();
  };

  return {
    runOnce,
    start() {
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await passing;
    },
  };
}

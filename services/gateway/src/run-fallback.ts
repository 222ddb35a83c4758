import { type Bus, publishFrame, type RunRecordStart, readRunFramesAndSteps, requestReply } from '@quill/bus';
import {
  errorFrame,
  frame,
  isReplicaFailure,
  isTerminalFrame,
  msgIds,
  RunEndReply,
  RunEndRequest,
} from '@quill/contracts';
import type { FastifyBaseLogger } from 'fastify';

export interface FallbackRequestOptions {
  timeoutMs: number;
  deadlineMs: number;
}

/**
 * The gateway's last resort for the terminal guarantee: past the deadline with no router left to
 * finish the run, it sends the terminal frame and `done` itself. It reads what the run already
 * stored first, because msg-id dedupe only covers the stream's duplicate window and a late
 * second terminal frame must never reach an author. The run row is the router's: it is asked to
 * end it (`router.runs.end`); with no router answering, the router's sweep finishes the row from
 * the terminal frame later, and billing's reconciliation settles it (README "Fault tolerance").
 */
export async function endRunIfUnfinished(
  bus: Bus,
  runId: string,
  logger: FastifyBaseLogger,
  request: FallbackRequestOptions,
  /**
   * Where the run starts: its `run_started`'s sequence, or when it was launched (the read then
   * starts shortly before), not the stream's start (docs/decisions/0077).
   */
  start: RunRecordStart = {},
): Promise<void> {
  const stored = await readRunFramesAndSteps(bus, runId, start);
  const frames = stored.frames.map((item) => item.frame);
  if (frames.some((value) => value.type === 'done')) return;
  const ended = !frames.some(isTerminalFrame);
  if (ended) {
    logger.error({ run_id: runId }, 'no terminal frame by the deadline; ending the run from the gateway');
    await publishFrame(bus, errorFrame(runId, 'worker_lost'), { msgId: msgIds.terminal(runId) });
  }
  await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
  if (!ended) return;
  try {
    await requestReply(
      bus,
      bus.names.routerRunEnd,
      { request: RunEndRequest, reply: RunEndReply },
      { v: 1, run_id: runId, reason: 'worker_lost', reserved: true },
      { ...request, retryReply: isReplicaFailure },
    );
  } catch (error) {
    logger.warn({ err: error, run_id: runId }, 'no router ended the row; left to its sweep');
  }
}

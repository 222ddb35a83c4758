import { type Bus, publishFrame, readStored } from '@quill/bus';
import { EventEnvelope, errorFrame, frame, isTerminalFrame, msgIds } from '@quill/contracts';
import type { FastifyBaseLogger } from 'fastify';

/**
 * The gateway's last resort for the terminal guarantee: past the deadline with no router left to
 * finish the run, it sends the terminal frame and `done` itself. It reads what the run already
 * stored first, because msg-id dedupe only covers the stream's duplicate window and a late
 * second terminal frame must never reach an author.
 */
export async function endRunIfUnfinished(bus: Bus, runId: string, logger: FastifyBaseLogger): Promise<void> {
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
  }
  await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
}

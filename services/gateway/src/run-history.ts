import type { ServerResponse } from 'node:http';
import { type Bus, readStored, runStartSeq } from '@quill/bus';
import {
  EventEnvelope,
  encodeSseFrame,
  encodeSseRetry,
  SSE_HEADERS,
  SSE_RETRY_MS,
  type SseFrame,
} from '@quill/contracts';
import { type ArchivedFrame, getArchivedFrames } from '@quill/db';
import type { Pool } from 'pg';

export interface RunHistory {
  source: 'stream' | 'archive';
  events: Array<{ id: number; frame: SseFrame }>;
}

/**
 * A run's frames after `afterSeq`, each with its SSE id (its EVENTS sequence): from the run
 * archive once the router archived the ended run (docs/architecture.md "Run archive"), so a run
 * replays the same however long ago it ran; from the stream before that.
 */
export async function readRunHistory(
  bus: Bus,
  pool: Pool,
  runId: string,
  afterSeq: number,
  /** When the run was launched: a read from its beginning starts there (docs/decisions/0076). */
  launchedAt?: string,
): Promise<RunHistory> {
  const archived = await getArchivedFrames(pool, runId, afterSeq);
  if (archived)
    return { source: 'archive', events: archived.map((item) => ({ id: item.seq, frame: item.frame })) };
  // From after `afterSeq`, or the run's first frame, not the stream's start: the server need not
  // look through the blocks before it for the run's subject (docs/decisions/0075, 0076).
  const stored = await readStored(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.events(runId),
    schema: EventEnvelope,
    afterSeq: afterSeq === 0 && launchedAt ? await runStartSeq(bus, runId, launchedAt) : afterSeq,
  });
  return {
    source: 'stream',
    events: stored.flatMap((item) =>
      item.envelope && item.seq > afterSeq ? [{ id: item.seq, frame: item.envelope.frame }] : [],
    ),
  };
}

/**
 * The SSE resume of an archived run: the same frames with the same ids the live stream had, after
 * `afterSeq`, then the end of the response (the run has ended; nothing more can come).
 */
export function writeArchivedStream(
  response: ServerResponse,
  frames: ArchivedFrame[],
  afterSeq: number,
  headers: Record<string, string | string[]>,
): void {
  response.writeHead(200, { ...SSE_HEADERS, ...headers });
  response.write(encodeSseRetry(SSE_RETRY_MS));
  for (const item of frames) if (item.seq > afterSeq) response.write(encodeSseFrame(item.frame, item.seq));
  response.end();
}

import type { SseFrame } from '@quill/contracts';
import { preciseNow, readSse } from './sse-reader.ts';

/** One frame as a client saw it. */
export interface TimedFrame {
  seq: number;
  frame: SseFrame;
  at: number;
}

export interface ClientRun {
  runId: string | undefined;
  status: number;
  frames: TimedFrame[];
  /** When any bytes of an event or a heartbeat arrived, in order (the client's view of liveness). */
  beats: number[];
  reconnects: number;
  startedAt: number;
  endedAt: number;
}

// A stream whose gateway died is picked up again on another one, as @quill/client does; bounded
// so a run that never ends cannot loop forever.
const MAX_RECONNECTS = 30;

/**
 * Starts a run on a gateway and reads it to `done` like an author's client: after a dropped
 * connection it resumes with Last-Event-ID on whichever gateway is alive (README "HTTP API").
 */
export async function streamRun(options: {
  gateways: () => string[];
  first: number;
  apiKey: string;
  body: unknown;
  deadlineMs: number;
  onFrame?: (frame: SseFrame) => void;
}): Promise<ClientRun> {
  const run: ClientRun = {
    runId: undefined,
    status: 0,
    frames: [],
    beats: [],
    reconnects: 0,
    startedAt: preciseNow(),
    endedAt: 0,
  };
  const deadline = Date.now() + options.deadlineMs;
  let done = false;
  const onEvent = (event: { id: string | undefined; data: string; receivedAt: number }) => {
    run.beats.push(event.receivedAt);
    const frame = JSON.parse(event.data) as SseFrame;
    run.frames.push({ seq: Number(event.id ?? 0), frame, at: event.receivedAt });
    options.onFrame?.(frame);
    if (frame.type === 'done') done = true;
    return done;
  };
  const onComment = () => run.beats.push(preciseNow());
  const authorization = { authorization: `Bearer ${options.apiKey}` };
  // A gateway that died as the request landed answers nothing: the client asks another one.
  let first: Awaited<ReturnType<typeof readSse>> | undefined;
  for (let attempt = 0; attempt < 3 && !first; attempt++) {
    first = await readSse({
      url: `${pick(options.gateways(), options.first + attempt)}/api/v1/agent/stream`,
      method: 'POST',
      headers: authorization,
      body: options.body,
      onEvent,
      onComment,
    }).catch(() => undefined);
  }
  run.status = first?.status ?? 0;
  const runHeader = first?.headers['x-quill-run-id'];
  run.runId = typeof runHeader === 'string' ? runHeader : undefined;
  while (!done && run.runId && run.reconnects < MAX_RECONNECTS && Date.now() < deadline) {
    run.reconnects++;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lastSeq = run.frames.at(-1)?.seq ?? 0;
    const resumed = await readSse({
      url: `${pick(options.gateways(), options.first + run.reconnects)}/api/v1/agent/runs/${run.runId}/stream`,
      headers: { ...authorization, 'last-event-id': String(lastSeq) },
      onEvent,
      onComment,
    }).catch(() => undefined);
    // 204: the run's stream already ended with `done` (the client missed nothing it needs).
    if (resumed?.status === 204) break;
  }
  run.endedAt = preciseNow();
  return run;
}

function pick(gateways: string[], index: number): string {
  if (gateways.length === 0) throw new Error('no gateway alive');
  return gateways[index % gateways.length]!;
}

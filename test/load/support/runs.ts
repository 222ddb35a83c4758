import { isTerminalFrame, type SseFrame } from '@quill/contracts';
import type { RecordedRequest } from '@quill/fake-llm';
import type { BenchAuthor, BenchStack } from './bench-stack.ts';
import { preciseNow, readSse } from './sse-reader.ts';

/** What one client saw of one run, kept small so hundreds of runs fit a benchmark. */
export interface RunTrace {
  status: number;
  runId: string | undefined;
  /** The session the run went into (its `run_started` frame). */
  sessionId?: string;
  postedAt: number;
  /** Per `text` frame: the chat text's length after it (UTF-16 units) and when it arrived. */
  text: Array<{ end: number; receivedAt: number }>;
  frames: number;
  terminals: number;
  endedWithDone: boolean;
  /** When `done` arrived: the run's end as the author's client sees it. */
  doneAt?: number;
  terminal: string;
  /** Set when the run did not end with exactly one terminal frame then `done`. */
  failure?: string;
}

export function failed(trace: RunTrace): boolean {
  return trace.failure !== undefined;
}

/**
 * A run with no frame for this long is stuck (a healthy one streams or ends well within it): the
 * benchmark says which run, fails it and exits non-zero instead of waiting for the run's wall clock.
 */
export const RUN_STALL_MS = 60_000;

/** POST /agent/stream and read the SSE until `done`. */
export async function streamRun(
  gateway: string,
  author: BenchAuthor,
  message: string,
  options: {
    signal?: AbortSignal;
    onTrace?: (trace: RunTrace) => void;
    stallMs?: number;
    /** Continue this session (the author's); a new one otherwise. */
    sessionId?: string;
  } = {},
): Promise<RunTrace> {
  const trace: RunTrace = {
    status: 0,
    runId: undefined,
    postedAt: preciseNow(),
    text: [],
    frames: 0,
    terminals: 0,
    endedWithDone: false,
    terminal: '',
  };
  options.onTrace?.(trace);
  let textLength = 0;
  const stallMs = options.stallMs ?? RUN_STALL_MS;
  const stalled = new AbortController();
  let lastFrame = 'no frame';
  let stallTimer: NodeJS.Timeout | undefined;
  const armStall = () => {
    clearTimeout(stallTimer);
    if (!Number.isFinite(stallMs)) return;
    stallTimer = setTimeout(() => stalled.abort(), stallMs);
  };
  armStall();
  const signal = options.signal ? AbortSignal.any([options.signal, stalled.signal]) : stalled.signal;
  try {
    const response = await readSse({
      url: `${gateway}/api/v1/agent/stream`,
      headers: author.auth,
      body: {
        project_id: author.projectId,
        message,
        ...(options.sessionId ? { session_id: options.sessionId } : {}),
      },
      signal,
      onEvent(event) {
        const value = JSON.parse(event.data) as SseFrame;
        armStall();
        lastFrame = value.type;
        trace.frames++;
        if (value.type === 'text') {
          textLength += value.content.length;
          trace.text.push({ end: textLength, receivedAt: event.receivedAt });
        } else if (value.type === 'run_started') {
          trace.runId = value.run_id;
          trace.sessionId = value.session_id;
        }
        if (isTerminalFrame(value)) {
          trace.terminals++;
          trace.terminal = value.type === 'error' ? `error:${value.code}` : value.type;
          if (value.type === 'workflow_stopped') trace.terminal = `stopped:${value.reason}`;
        }
        if (value.type === 'done') {
          trace.endedWithDone = true;
          trace.doneAt = event.receivedAt;
          return true;
        }
        return false;
      },
    });
    trace.status = response.status;
    if (response.status !== 200)
      trace.failure = `http ${response.status} ${response.body?.slice(0, 200) ?? ''}`;
  } catch (error) {
    trace.failure = options.signal?.aborted ? 'aborted' : `client: ${(error as Error).message}`;
  } finally {
    clearTimeout(stallTimer);
  }
  if (options.signal?.aborted && !trace.endedWithDone) trace.failure = 'aborted';
  else if (stalled.signal.aborted && !trace.endedWithDone) {
    trace.failure = `stuck: no frame for ${stallMs} ms after ${lastFrame}`;
    console.error(`run ${trace.runId ?? '(no run id)'} stuck: no frame for ${stallMs} ms after ${lastFrame}`);
    process.exitCode = 1;
  }
  if (!trace.failure && !(trace.terminals === 1 && trace.endedWithDone)) {
    trace.failure = `terminals ${trace.terminals}, done ${trace.endedWithDone}`;
  } else if (!trace.failure && trace.terminal !== 'workflow_complete') trace.failure = trace.terminal;
  return trace;
}

/** Relay delays of one run: its frames matched to the tokens the fake LLM stamped. */
export interface RunDelays {
  /** Per text frame: arrival minus the emit time of the newest token in it (figure 1). */
  frame: number[];
  /** When each of those frames arrived, and how many tokens it carried (same order). */
  frameAt: number[];
  frameTokens: number[];
  /** Per token: arrival of the frame that carried it minus its emit time (coalescing included). */
  token: number[];
  /** Per token: how long it waited in its frame for the newest one (coalescing; same order as token). */
  held: number[];
  /** POST to first text frame. */
  ttft: number;
  /** POST until the model request reached the fake LLM (gateway, router, context, writer). */
  toModel: number;
  /** The first token's emit time to its frame's arrival. */
  firstTokenRelay: number;
  /** What the fake LLM itself took (request to first token: its TTFT and scheduling). */
  modelTtft: number;
  tokens: number;
}

/**
 * Content matching: the fake records, per content delta, the reply's length so far and the
 * delta's `x_emitted_at`; a text frame ending at length L carries every token up to L, the newest
 * being the one that ends at L. The run's text must be the model's reply unchanged (a plain
 * reply: no `<file>` capture, no held chat).
 */
export function matchDelays(trace: RunTrace, request: RecordedRequest | undefined): RunDelays | undefined {
  const stream = request?.stream;
  if (!stream || trace.text.length === 0) return undefined;
  const { content_end: ends, emitted_at: emittedAt } = stream;
  const frame: number[] = [];
  const frameAt: number[] = [];
  const frameTokens: number[] = [];
  const token: number[] = [];
  const held: number[] = [];
  let next = 0;
  for (const received of trace.text) {
    let newest = -1;
    const oldest = next;
    while (next < ends.length && ends[next]! <= received.end) {
      token.push(received.receivedAt - emittedAt[next]!);
      newest = next++;
    }
    if (newest < 0) continue;
    for (let index = oldest; index <= newest; index++) held.push(emittedAt[newest]! - emittedAt[index]!);
    frame.push(received.receivedAt - emittedAt[newest]!);
    frameAt.push(received.receivedAt);
    frameTokens.push(next - oldest);
  }
  const first = trace.text[0]!.receivedAt;
  return {
    frame,
    frameAt,
    frameTokens,
    token,
    held,
    ttft: first - trace.postedAt,
    toModel: stream.started_at - trace.postedAt,
    firstTokenRelay: first - emittedAt[0]!,
    modelTtft: emittedAt[0]! - stream.started_at,
    tokens: ends.length,
  };
}

/**
 * The router's model call of a run (its routing decision) as the fake LLM served it: request
 * received → its last token; undefined when the router called no model.
 */
export async function routerCallMs(
  bench: BenchStack,
  runId: string | undefined,
): Promise<number | undefined> {
  if (!runId) return undefined;
  const routed = (await bench.fake.requests({ run_id: runId, role: 'router' }))[0];
  if (!routed?.stream) return undefined;
  return (routed.stream.emitted_at.at(-1) ?? routed.stream.started_at) - routed.received_at;
}

/** The model request of a run's writer step, as the fake LLM recorded it. */
export async function writerRequest(
  bench: BenchStack,
  runId: string | undefined,
): Promise<RecordedRequest | undefined> {
  if (!runId) return undefined;
  const requests = await bench.fake.requests({ run_id: runId, role: 'writer' });
  return requests.at(-1);
}

export interface DirectTrace {
  /** Per content chunk: arrival minus its `x_emitted_at`. */
  chunk: number[];
  /** Request to first content chunk, minus nothing. */
  ttft: number;
  tokens: number;
  failure?: string;
}

/**
 * The baseline: the same client reading the fake LLM's stream directly (no Quill in between),
 * at the same pacing and concurrency.
 */
export async function streamDirect(
  fakeUrl: string,
  options: { ttftMs: number; tokensPerSecond: number },
): Promise<DirectTrace> {
  const trace: DirectTrace = { chunk: [], ttft: Number.NaN, tokens: 0 };
  const postedAt = preciseNow();
  try {
    const response = await readSse({
      url: `${fakeUrl}/chat/completions`,
      headers: {
        authorization: 'Bearer bench',
        'x-quill-role': 'bench_direct',
        'x-fake-ttft-ms': String(options.ttftMs),
        'x-fake-tokens-per-second': String(options.tokensPerSecond),
      },
      body: { model: 'quill-fake-1', stream: true, messages: [{ role: 'user', content: 'bench' }] },
      onEvent(event) {
        if (event.data === '[DONE]') return true;
        const chunk = JSON.parse(event.data) as {
          choices: Array<{ delta: { content?: string } }>;
          x_emitted_at: number;
        };
        if (!chunk.choices[0]?.delta.content) return false;
        if (trace.tokens === 0) trace.ttft = event.receivedAt - postedAt;
        trace.tokens++;
        trace.chunk.push(event.receivedAt - chunk.x_emitted_at);
        return false;
      },
    });
    if (response.status !== 200) trace.failure = `http ${response.status}`;
  } catch (error) {
    trace.failure = `client: ${(error as Error).message}`;
  }
  return trace;
}

/** A reply of `tokens` CJK characters (one token each) with no markup, so frames carry it unchanged. */
export function plainReply(tokens: number): string {
  const prose = '雨夜里旧书店的灯还亮着林晚推门进去老人抬头看了她一眼又低下头去擦那只铜铃';
  let text = '';
  while (text.length < tokens) text += prose;
  return text.slice(0, tokens);
}

import { FRAME_TYPES, SseFrame } from '@quill/contracts';
import type { StreamedFrame } from './run-stream.ts';

/** What `openRunEventSource` needs of the client: a way to mint stream tickets. */
export interface TicketSource {
  agent: { streamTicket(runId: string): Promise<{ stream_url: string }> };
}

export interface RunEventSourceOptions {
  client: TicketSource;
  /** The gateway, as given to `createQuillClient`. */
  baseUrl: string;
  runId: string;
  onFrame(streamed: StreamedFrame): void;
  /** New tickets after a lost connection before giving up. */
  maxReopens?: number;
  /** The EventSource class (the browser's by default). */
  EventSourceClass?: typeof EventSource;
}

export interface RunEventSource {
  /** Settles once `done` arrived; rejects when the stream cannot go on. */
  readonly finished: Promise<void>;
  close(): void;
}

const REOPEN_DELAY_MS = 500;

/**
 * A run's frames in a browser through the native EventSource (README "Browser streaming"). Stream
 * tickets are single-use, so the EventSource's own reconnect (same URL) is refused and closes it;
 * this then mints a new ticket and opens a new EventSource after the last id it saw, until `done`.
 */
export function openRunEventSource(options: RunEventSourceOptions): RunEventSource {
  const EventSourceClass = options.EventSourceClass ?? EventSource;
  let source: EventSource | undefined;
  let lastId: number | undefined;
  let reopens = 0;
  let closed = false;
  let settle!: { resolve: () => void; reject: (error: unknown) => void };
  const finished = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const close = () => {
    closed = true;
    source?.close();
  };

  const open = async () => {
    const { stream_url: streamUrl } = await options.client.agent.streamTicket(options.runId);
    if (closed) return;
    const resumeAt = lastId === undefined ? '' : `&last_event_id=${lastId}`;
    const opened = new EventSourceClass(`${options.baseUrl.replace(/\/$/, '')}${streamUrl}${resumeAt}`);
    source = opened;
    let received = false;
    for (const type of FRAME_TYPES) {
      opened.addEventListener(type, (event) => {
        const message = event as MessageEvent;
        // The `error` frame shares its name with the EventSource's own connection `error`
        // event, which carries no data.
        if (typeof message.data !== 'string') return;
        const id = Number(message.lastEventId);
        received = true;
        if (lastId !== undefined && id <= lastId) return;
        lastId = id;
        options.onFrame({ id, frame: SseFrame.parse(JSON.parse(String(message.data))) });
        if (type === 'done') {
          close();
          settle.resolve();
        }
      });
    }
    opened.onerror = (event) => {
      if (typeof (event as unknown as { data?: unknown }).data === 'string') return;
      // CONNECTING: the browser retries by itself (and will be refused); CLOSED: it gave up.
      if (opened.readyState !== EventSourceClass.CLOSED || closed) return;
      // A connection that delivered frames was progress: only drops in a row count.
      if (received) reopens = 0;
      if (reopens++ >= (options.maxReopens ?? 5)) {
        close();
        settle.reject(new Error('the run stream kept dropping'));
        return;
      }
      setTimeout(() => void open().catch(fail), REOPEN_DELAY_MS);
    };
  };
  const fail = (error: unknown) => {
    close();
    settle.reject(error);
  };
  void open().catch(fail);
  return { finished, close };
}

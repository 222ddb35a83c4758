import { type Bus, publishFrame } from '@quill/bus';
import { type AgentRole, frame, msgIds, type SseFrame } from '@quill/contracts';

export interface EmitterSettings {
  flushMs: number;
  flushBytes: number;
  /** Replaces `flushMs` when set: the process's load-adaptive window (see flush-window.ts). */
  flushWindow?: { readonly ms: number };
}

export interface StepEmitter {
  text(delta: string): void;
  /** Reasoning deltas, coalesced into `thinking` frames by the same window as text. */
  thinking(delta: string): void;
  fileDelta(fileId: string, delta: string): void;
  /** Any other frame: pending text is flushed first so the author sees events in order. */
  emit(value: SseFrame): void;
  /** Flushes and waits until every frame of the step is stored; throws the first publish error. */
  close(): Promise<void>;
  /**
   * Like close, but the emitter stays usable: returns the stream sequence (the SSE id) of the
   * newest frame stored so far, 0 when none is. The step journal records it as what stands.
   */
  settle(): Promise<number>;
  readonly framesPublished: number;
}

type PendingKind = 'text' | 'thinking' | 'file';

/**
 * Coalesces text and reasoning deltas into frames: a delta after an idle gap goes out at once (first-token
 * latency), while sustained flow is batched per `flushMs` / `flushBytes`, so a run costs tens
 * of messages per second rather than one per token. Under sustained flow the frame goes out with
 * the first delta that arrives `flushMs` after the last frame, so its newest token is not held;
 * the timer only sends what a paused stream left pending (at most about `2 × flushMs` late).
 */
export function createStepEmitter(
  bus: Bus,
  identity: { runId: string; step: number; attempt: number; agent: AgentRole },
  settings: EmitterSettings,
): StepEmitter {
  const windowMs = () => settings.flushWindow?.ms ?? settings.flushMs;
  let index = 0;
  let pending: { kind: PendingKind; fileId: string; content: string } | undefined;
  let lastFlushAt = 0;
  let lastDeltaAt = Number.NEGATIVE_INFINITY;
  /** Moving average of the time between deltas: when the next one is due. */
  let gap = 2 * windowMs();
  let timer: NodeJS.Timeout | undefined;
  let firstError: unknown;
  let lastSeq = 0;
  const inFlight = new Set<Promise<unknown>>();

  const publish = (value: SseFrame) => {
    const msgId = msgIds.frame(identity.runId, identity.step, identity.attempt, index++);
    const sent = publishFrame(bus, value, { msgId, quiet: true }).then(
      (ack) => {
        if (ack.seq > lastSeq) lastSeq = ack.seq;
      },
      (error: unknown) => {
        firstError ??= error;
      },
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const { kind, fileId, content } = pending;
    pending = undefined;
    lastFlushAt = performance.now();
    publish(
      kind === 'file'
        ? frame('file_delta', identity.runId, { file_id: fileId, content })
        : frame(kind, identity.runId, { agent: identity.agent, content }),
    );
  };

  // The window is over, but under sustained flow (deltas closer than the window) the next delta
  // is due within half a gap more: it will carry the frame.
  const flushUnlessDue = () => {
    timer = undefined;
    const now = performance.now();
    const dueBy = lastDeltaAt + 1.5 * gap;
    const window = windowMs();
    if (gap >= window || now >= dueBy || now - lastFlushAt >= 2 * window) flush();
    else timer = setTimeout(flushUnlessDue, Math.min(dueBy, lastFlushAt + 2 * window) - now);
  };

  const add = (kind: PendingKind, fileId: string, delta: string) => {
    if (!delta) return;
    if (pending && (pending.kind !== kind || pending.fileId !== fileId)) flush();
    if (pending) pending.content += delta;
    else pending = { kind, fileId, content: delta };
    const now = performance.now();
    const window = windowMs();
    gap = 0.75 * gap + 0.25 * Math.min(now - lastDeltaAt, 2 * window);
    lastDeltaAt = now;
    const sinceFlush = now - lastFlushAt;
    if (pending.content.length >= settings.flushBytes || sinceFlush >= window) flush();
    else timer ??= setTimeout(flushUnlessDue, window - sinceFlush);
  };

  return {
    text: (delta) => add('text', '', delta),
    thinking: (delta) => add('thinking', '', delta),
    fileDelta: (fileId, delta) => add('file', fileId, delta),
    emit(value) {
      flush();
      publish(value);
    },
    async close() {
      flush();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      if (firstError) throw firstError;
    },
    async settle() {
      await this.close();
      return lastSeq;
    },
    get framesPublished() {
      return index;
    },
  };
}

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

/** Weight of the newest inter-delta gap in the moving average that predicts the next delta. */
const GAP_WEIGHT = 0.5;
/**
 * Deltas closer than this came in one socket read (a worker that reads late gets every token
 * emitted meanwhile at once): they say nothing about the model's pace, and the rest of a read
 * goes at the end of the event-loop turn rather than waiting for a next delta.
 */
const SAME_READ_MS = 1;

/**
 * Coalesces text and reasoning deltas into frames, bounding every token's age rather than the
 * frame rate alone (docs/decisions/0031-token-age-coalescing.md): what the author sees is the
 * delay of each token, and a coalesced frame's older tokens wait for its newest.
 * - A delta is held only when the next one is expected while the pending frame is still younger
 *   than the window; otherwise it goes at once (after an idle gap, or when deltas come further
 *   apart than the window, every delta is its own frame).
 * - The frame goes with the delta that ends the window (its newest token is not held), or with
 *   the delta after which the next would come too late; a timer sends what a paused stream left
 *   pending once its oldest token is one window old. No token waits longer than the window.
 * - The rest of a socket read whose first delta went at once goes at the end of the turn, together.
 * - `flushBytes` caps a frame's size.
 */
export function createStepEmitter(
  bus: Bus,
  identity: { runId: string; step: number; attempt: number; agent: AgentRole },
  settings: EmitterSettings,
): StepEmitter {
  const windowMs = () => settings.flushWindow?.ms ?? settings.flushMs;
  const frameId = msgIds.frameIds(identity.runId, identity.step, identity.attempt);
  let index = 0;
  let pending: { kind: PendingKind; fileId: string; content: string; since: number } | undefined;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  let lastDeltaAt = Number.NEGATIVE_INFINITY;
  /** Moving average of the time between deltas: when the next one is due. */
  let gap = windowMs();
  let timer: NodeJS.Timeout | undefined;
  let endOfTurn: NodeJS.Immediate | undefined;
  let firstError: unknown;
  let lastSeq = 0;
  /**
   * Publishes not answered yet, and who waits for none to be left: a count and one handler per
   * publish, where a set of promises cost each frame a `finally` (two more promises) and the set.
   */
  let inFlight = 0;
  let drained: Array<() => void> = [];
  const answered = () => {
    if (--inFlight > 0) return;
    const waiting = drained;
    drained = [];
    for (const resolve of waiting) resolve();
  };

  const publish = (value: SseFrame) => {
    const msgId = frameId(index++);
    inFlight++;
    publishFrame(bus, value, { msgId, quiet: true, untraced: true }).then(
      (ack) => {
        if (ack.seq > lastSeq) lastSeq = ack.seq;
        answered();
      },
      (error: unknown) => {
        firstError ??= error;
        answered();
      },
    );
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    if (endOfTurn) clearImmediate(endOfTurn);
    timer = undefined;
    endOfTurn = undefined;
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

  const add = (kind: PendingKind, fileId: string, delta: string) => {
    if (!delta) return;
    if (pending && (pending.kind !== kind || pending.fileId !== fileId)) flush();
    const now = performance.now();
    const window = windowMs();
    const sameRead = now - lastDeltaAt < SAME_READ_MS;
    if (!sameRead) gap = (1 - GAP_WEIGHT) * gap + GAP_WEIGHT * Math.min(now - lastDeltaAt, 2 * window);
    lastDeltaAt = now;
    if (pending) pending.content += delta;
    else pending = { kind, fileId, content: delta, since: now };
    const age = now - pending.since;
    if (pending.content.length >= settings.flushBytes || now - lastFlushAt >= window) flush();
    // The rest of a read: it goes with the read's pending frame, at the end of the turn unless
    // that frame already waits for its window.
    else if (sameRead) {
      if (!timer) endOfTurn ??= setImmediate(flush);
    }
    // The next delta would find the frame older than the window: this one carries it.
    else if (age + gap > window) flush();
    else timer ??= setTimeout(flush, window - age);
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
      while (inFlight > 0) await new Promise<void>((resolve) => drained.push(resolve));
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

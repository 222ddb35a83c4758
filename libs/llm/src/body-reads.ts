import { finished, Readable } from 'node:stream';

/** A streamed reply body read one network read at a time, as its async iterator reads it. */
export interface BodyReads {
  /** The next read, `done` once the body ended; rejects with the body's error. */
  next(): Promise<IteratorResult<Uint8Array, undefined>>;
  /** Stops reading: the body is destroyed unless it already ended. */
  close(): void;
}

/** Reads waiting for the caller before the body is paused (TCP then holds the rest back). */
const MAX_QUEUED = 16;

/**
 * Reads a model's streamed body. A Node stream (the model transport's, docs/decisions/0046) is
 * read in flowing mode: each network read is handed over from its `data` event, at most one
 * promise per read, and none when the caller is behind. Its async iterator spends a
 * `process.nextTick`, a promise of its own and an async generator's step on every read, at one
 * read per streamed token (docs/decisions/0079). Anything else is read with its iterator.
 *
 * What the iterator does, this does: the reads in order, then the end or the body's error
 * (a reset, undici's abort), a pause while reads wait for the caller, the body destroyed when the
 * caller stops before its end. Reads that arrived before an error are handed over first.
 */
export function readBody(body: AsyncIterable<Uint8Array>): BodyReads {
  if (body instanceof Readable) return flowingReads(body);
  const iterator = body[Symbol.asyncIterator]();
  return {
    next: () => iterator.next() as Promise<IteratorResult<Uint8Array, undefined>>,
    close: () => void iterator.return?.()?.catch(() => undefined),
  };
}

interface Waiting {
  resolve(read: IteratorResult<Uint8Array, undefined>): void;
  reject(error: unknown): void;
}

function flowingReads(stream: Readable): BodyReads {
  const queue: Uint8Array[] = [];
  let ended = false;
  /** The body's error, once it failed (`finished` reports an Error, never undefined). */
  let failure: Error | undefined;
  let waiting: Waiting | undefined;
  const answer = () => {
    const caller = waiting;
    if (!caller) return;
    if (queue.length > 0) {
      waiting = undefined;
      caller.resolve({ done: false, value: queue.shift()! });
    } else if (failure) {
      waiting = undefined;
      caller.reject(failure);
    } else if (ended) {
      waiting = undefined;
      caller.resolve({ done: true, value: undefined });
    }
  };
  const stopWatching = finished(stream, (error) => {
    if (error) failure = error;
    else ended = true;
    answer();
  });
  stream.on('data', (chunk: Uint8Array) => {
    queue.push(chunk);
    if (queue.length >= MAX_QUEUED) stream.pause();
    answer();
  });
  return {
    next() {
      if (queue.length > 0) {
        const value = queue.shift()!;
        if (queue.length === 0 && stream.isPaused()) stream.resume();
        return Promise.resolve({ done: false, value });
      }
      if (stream.isPaused()) stream.resume();
      if (failure) return Promise.reject(failure);
      if (ended) return Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    close() {
      stopWatching();
      if (!ended && !stream.destroyed) stream.destroy();
    },
  };
}

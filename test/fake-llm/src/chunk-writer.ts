import type { ServerResponse } from 'node:http';

// Batching writes keeps hundreds of as-fast-as-possible streams from costing a syscall per token.
const FLUSH_BYTES = 16 * 1024;

export interface ChunkWriter {
  push(data: string): Promise<void>;
  /** Resolves once everything pushed so far has been handed to the socket. */
  flush(): Promise<void>;
}

/**
 * `writeBytes` set: every flush goes out in writes of that many bytes, each awaited and with
 * Nagle off, so the client reads breaks in the middle of UTF-8 characters and JSON lines.
 */
export function createChunkWriter(
  response: ServerResponse,
  signal: AbortSignal,
  writeBytes?: number,
): ChunkWriter {
  let buffer = '';
  if (writeBytes !== undefined) response.socket?.setNoDelay(true);
  const write = (data: string | Buffer) =>
    // Waiting for the write callback is the backpressure, and it lets a scripted disconnect
    // destroy the socket only after the bytes before it really went out.
    new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      response.write(data, (error) => {
        signal.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve();
      });
    });
  const flush = async (): Promise<void> => {
    if (buffer === '') return;
    const data = buffer;
    buffer = '';
    signal.throwIfAborted();
    if (writeBytes === undefined) return write(data);
    const bytes = Buffer.from(data, 'utf8');
    for (let offset = 0; offset < bytes.length; offset += writeBytes) {
      signal.throwIfAborted();
      await write(bytes.subarray(offset, offset + writeBytes));
    }
  };
  return {
    async push(data) {
      buffer += data;
      if (buffer.length >= FLUSH_BYTES) await flush();
    },
    flush,
  };
}

/** Milliseconds since the epoch with sub-millisecond precision, comparable across processes. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

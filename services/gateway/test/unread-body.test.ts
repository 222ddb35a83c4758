import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { dropUnreadBody } from '../src/unread-body.ts';

/** A request body still arriving: a stream with IncomingMessage's `complete` flag. */
function arriving(complete = false): PassThrough & { complete: boolean } {
  return Object.assign(new PassThrough(), { complete });
}
const asRequest = (stream: PassThrough) => stream as unknown as IncomingMessage;
const limits = { maxBytes: 1024, maxMs: 60_000 };

describe('dropping a refused request’s unread body', () => {
  it('returns at once for a request whose body has all arrived, and reads nothing', async () => {
    const request = arriving(true);
    request.write('left for Node to discard');
    await dropUnreadBody(asRequest(request), limits);
    expect(request.listenerCount('data')).toBe(0);
    expect(request.readableLength).toBeGreaterThan(0);
  });

  it('reads and drops what is still coming until the body ends', async () => {
    const request = arriving();
    let dropped = false;
    const dropping = dropUnreadBody(asRequest(request), limits).then(() => {
      dropped = true;
    });
    request.write('a'.repeat(500));
    await new Promise((next) => setImmediate(next));
    expect(dropped).toBe(false);
    request.end('b'.repeat(500));
    await dropping;
    expect(request.readableEnded).toBe(true);
    expect(request.listenerCount('data')).toBe(0);
  });

  it('stops reading past maxBytes without waiting for the end', async () => {
    const request = arriving();
    const dropping = dropUnreadBody(asRequest(request), limits);
    request.write('a'.repeat(800));
    request.write('b'.repeat(800));
    await dropping;
    expect(request.readableEnded).toBe(false);
    expect(request.listenerCount('data')).toBe(0);
  });

  it('stops at maxMs for a body that never ends', async () => {
    const request = arriving();
    request.write('a'.repeat(10));
    await dropUnreadBody(asRequest(request), { maxBytes: 1024, maxMs: 20 });
    expect(request.readableEnded).toBe(false);
    expect(request.listenerCount('end')).toBe(0);
  });
});

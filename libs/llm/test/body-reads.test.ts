import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBody } from '../src/body-reads.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const text = (read: IteratorResult<Uint8Array, undefined>) =>
  read.done ? '<end>' : Buffer.from(read.value).toString('utf8');

describe('readBody (a model reply body in flowing mode)', () => {
  it('hands over the reads in order, those that came before the caller asked included, then the end', async () => {
    const body = new PassThrough();
    const reads = readBody(body);
    body.write(bytes('a'));
    body.write(bytes('b'));
    await new Promise((resolve) => setImmediate(resolve));
    const waited = reads.next().then(text);
    expect(await waited).toBe('a');
    expect(text(await reads.next())).toBe('b');
    const pending = reads.next();
    body.write(bytes('c'));
    expect(text(await pending)).toBe('c');
    body.end();
    expect(text(await reads.next())).toBe('<end>');
    expect(text(await reads.next())).toBe('<end>');
  });

  it('rejects with the body’s error once the reads before it are handed over', async () => {
    const body = new PassThrough();
    const reads = readBody(body);
    body.write(bytes('kept'));
    await new Promise((resolve) => setImmediate(resolve));
    body.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    expect(text(await reads.next())).toBe('kept');
    await expect(reads.next()).rejects.toThrow('other side closed');
  });

  it('rejects a caller already waiting when the body fails', async () => {
    const body = new PassThrough();
    const reads = readBody(body);
    const waiting = reads.next();
    body.destroy(new Error('reset'));
    await expect(waiting).rejects.toThrow('reset');
  });

  it('pauses the body while reads wait for the caller, and resumes once they are taken', async () => {
    const body = new PassThrough();
    const reads = readBody(body);
    for (let index = 0; index < 20; index++) body.write(bytes(String(index % 10)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(body.isPaused()).toBe(true);
    let all = '';
    for (let index = 0; index < 20; index++) all += text(await reads.next());
    expect(all).toBe('01234567890123456789');
    expect(body.isPaused()).toBe(false);
  });

  it('destroys a body the caller stops reading before its end, and leaves an ended one be', async () => {
    const open = new PassThrough();
    readBody(open).close();
    expect(open.destroyed).toBe(true);

    const done = new PassThrough();
    const reads = readBody(done);
    done.end(bytes('x'));
    expect(text(await reads.next())).toBe('x');
    expect(text(await reads.next())).toBe('<end>');
    reads.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(done.readableEnded).toBe(true);
  });

  it('reads a body that is no Node stream with its own iterator', async () => {
    const web = Readable.toWeb(Readable.from([bytes('w1'), bytes('w2')])) as AsyncIterable<Uint8Array>;
    const reads = readBody(web);
    expect(text(await reads.next())).toBe('w1');
    expect(text(await reads.next())).toBe('w2');
    expect(text(await reads.next())).toBe('<end>');
  });
});

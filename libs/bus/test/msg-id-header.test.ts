import { PubHeaders } from '@nats-io/jetstream';
import { MsgHdrsImpl } from '@nats-io/transport-node';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MsgIdHeader } from '../src/publish.ts';

/** What the client itself would send for a header block holding only this id. */
function clientBlock(msgId: string): string {
  return Buffer.from(
    (MsgHdrsImpl.fromRecord({ [PubHeaders.MsgIdHdr]: [msgId] }) as MsgHdrsImpl).encode(),
  ).toString('utf8');
}

describe('a streamed frame’s id header, encoded once', () => {
  it('sends the same bytes as the client’s own encoding, for any id a header may carry', () => {
    const headerValue = fc.string({ unit: 'grapheme', maxLength: 60 }).filter((id) => !/[\r\n]/.test(id));
    fc.assert(
      fc.property(headerValue, (msgId) => {
        const header = new MsgIdHeader(msgId);
        expect(Buffer.from(header.encode()).toString('utf8')).toBe(clientBlock(msgId));
        expect(header.get(PubHeaders.MsgIdHdr)).toBe(msgId);
      }),
    );
  });

  it('encodes a frame id as the stream reads it back', () => {
    const block = Buffer.from(new MsgIdHeader('AbCdEfGhIjKlMnOpQrStUv.2.0.17').encode()).toString('latin1');
    expect(block).toBe('NATS/1.0\r\nNats-Msg-Id: AbCdEfGhIjKlMnOpQrStUv.2.0.17\r\n\r\n');
    expect(MsgHdrsImpl.decode(new MsgIdHeader('x.1.0.0').encode()).get(PubHeaders.MsgIdHdr)).toBe('x.1.0.0');
  });
});

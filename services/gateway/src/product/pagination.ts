import { QuillError } from '@quill/contracts';
import { z } from 'zod';

/**
 * Opaque list cursors (README "HTTP API": `?limit&cursor` → `next_cursor`): the keyset position
 * of the last item, base64url JSON. A cursor a client altered is a 400 naming `cursor`, never a
 * database error.
 */
const TimeCursor = z.strictObject({ at: z.iso.datetime({ precision: 6 }), id: z.uuid() });
const SeqCursor = z.strictObject({ seq: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) });

function decode<S extends z.ZodType>(schema: S, cursor: string | undefined): z.infer<S> | undefined {
  if (cursor === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new QuillError('invalid_request', {
      details: { fields: { cursor: ['not a cursor from this list'] } },
    });
  return parsed.data;
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

export const decodeTimeCursor = (cursor: string | undefined) => decode(TimeCursor, cursor);
export const decodeSeqCursor = (cursor: string | undefined) => decode(SeqCursor, cursor)?.seq;

/**
 * A page from `limit + 1` fetched rows: the extra row only says that there is a next page, whose
 * cursor is the position of the last row returned.
 */
export function page<T>(
  rows: readonly T[],
  limit: number,
  position: (row: T) => { at: string; id: string } | { seq: number },
): { items: T[]; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next_cursor: rows.length > limit && last ? encode(position(last)) : null };
}

import { z } from 'zod';

/**
 * Text that PostgreSQL can store and every client can render: no NUL (a `text` column refuses
 * U+0000) and no unpaired UTF-16 surrogate (not encodable as UTF-8). Every text field of an
 * HTTP body is built from this, so such input is a 400 naming the field, never a 500.
 */
export const storableText = () =>
  z
    .string()
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL characters')
    .refine((value) => value.isWellFormed(), 'must not contain unpaired surrogates');

/** PostgreSQL `integer` (int4): larger numbers would be a database error. */
export const INT4_MAX = 2_147_483_647;
export const int4 = () =>
  z
    .number()
    .int()
    .min(-INT4_MAX - 1)
    .max(INT4_MAX);

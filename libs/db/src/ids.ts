const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Ids arrive from URLs and bus messages. Anything that is not a uuid cannot name a row, and
 * checking here keeps Postgres from answering a 500-worthy 22P02 for what is really a 404.
 */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

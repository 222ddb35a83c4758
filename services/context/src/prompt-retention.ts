import { clearStoredPrompts } from '@quill/db/context';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

/** Once a minute: the pass is one indexed UPDATE of the few rows that still hold a prompt. */
const CLEAR_EVERY_MS = 60_000;

/**
 * Clears the prompts stored with Context Traces once no redelivered step can ask for them
 * (docs/decisions/0033-dispatch-by-reference.md): without it every compile's whole prompt would
 * stay in the table for good. Every replica runs it; the UPDATE is idempotent, so two passes at
 * once only share the work. Answers a stop that waits for a pass in flight.
 */
export function startPromptRetention(input: {
  pool: Pool;
  logger: Logger;
  retentionMs: number;
  everyMs?: number;
}): () => Promise<void> {
  let inFlight: Promise<void> | undefined;
  const pass = () => {
    if (inFlight) return;
    inFlight = clearStoredPrompts(input.pool, { olderThanMs: input.retentionMs })
      .then((cleared) => {
        if (cleared > 0) input.logger.info({ cleared }, 'stored prompts cleared');
      })
      .catch((error: unknown) => {
        // The next pass tries again; a database away for a minute costs nothing but rows.
        input.logger.warn({ err: error }, 'clearing stored prompts failed');
      })
      .finally(() => {
        inFlight = undefined;
      });
  };
  const timer = setInterval(pass, input.everyMs ?? CLEAR_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await inFlight;
  };
}

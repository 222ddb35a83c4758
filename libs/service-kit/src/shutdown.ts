import type { Logger } from 'pino';

/**
 * One bounded shutdown per process: SIGTERM/SIGINT run `stop` once; if it has not finished in
 * `timeoutMs` the process exits anyway, so an orchestrator never waits on a wedged drain.
 */
export function installShutdown(options: {
  stop: () => Promise<void>;
  timeoutMs: number;
  logger: Logger;
}): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    options.logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      options.logger.error({ timeout_ms: options.timeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, options.timeoutMs);
    timer.unref();
    options
      .stop()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        options.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

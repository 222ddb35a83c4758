import type { IncomingMessage, ServerResponse } from 'node:http';
import { FastifyOtelInstrumentation } from '@fastify/otel';

export type FastifyOtelPlugin = ReturnType<FastifyOtelInstrumentation['plugin']>;

/** What `register.ts` leaves behind for the service's `main.ts`, which runs after it. */
export interface TelemetryHandle {
  readonly serviceName: string;
  /** Exports every finished span now. */
  flush(): Promise<void>;
  /** Flushes and stops the SDK; later calls return the same promise. */
  shutdown(): Promise<void>;
  fastifyPlugin(): FastifyOtelPlugin;
  /** Answers a Prometheus scrape with every metric of this process (text exposition format). */
  serveMetrics(request: IncomingMessage, response: ServerResponse): void;
}

// A global symbol rather than a module variable: register.ts and main.ts still meet here if two
// copies of this package end up installed.
const HANDLE_KEY = Symbol.for('quill.telemetry.handle');

type HandleHolder = { [HANDLE_KEY]?: TelemetryHandle };

export function installTelemetryHandle(handle: TelemetryHandle): void {
  (globalThis as HandleHolder)[HANDLE_KEY] = handle;
}

/** The handle set by `@quill/telemetry/register`; undefined when the process was started without it. */
export function currentTelemetry(): TelemetryHandle | undefined {
  return (globalThis as HandleHolder)[HANDLE_KEY];
}

/** Flush and stop tracing; call from the service's shutdown. A no-op without `register`. */
export async function shutdownTelemetry(): Promise<void> {
  await currentTelemetry()?.shutdown();
}

/**
 * The `@fastify/otel` plugin for `app.register(fastifyOtelPlugin())`, before routes are added.
 * Without `register` (in-process tests) a disabled instrumentation is used, so
 * `request.opentelemetry()` still exists and simply reports `enabled: false`.
 */
export function fastifyOtelPlugin(): FastifyOtelPlugin {
  const handle = currentTelemetry();
  if (handle) return handle.fastifyPlugin();
  return new FastifyOtelInstrumentation({ enabled: false }).plugin();
}

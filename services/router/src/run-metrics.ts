import { quillMetrics } from '@quill/telemetry';

/**
 * `quill.runs.active`: runs this router holds right now, whatever the handler's outcome. Summed
 * over routers it is the fleet's concurrent runs (docs/operations.md "Sizing").
 */
export function countActiveRuns<A extends unknown[], R>(
  handle: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    const active = quillMetrics().runsActive;
    active.add(1);
    try {
      return await handle(...args);
    } finally {
      active.add(-1);
    }
  };
}

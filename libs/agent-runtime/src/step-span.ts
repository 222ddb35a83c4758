import type { StepResult } from '@quill/contracts';
import { SpanStatusCode, trace } from '@quill/telemetry';

/**
 * The step's outcome on the worker's step span (the active consumer span): a step that failed
 * returns its result rather than throwing, so without this its span would read as a success
 * (docs/operations.md "Traces").
 */
export function markStepSpan(result: StepResult): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttributes({ 'quill.step': result.step, 'quill.step.outcome': result.outcome });
  if (result.outcome === 'failed') {
    const code = result.error_code ?? 'internal_error';
    span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  } else if (result.stop_reason) span.setAttribute('quill.stop_reason', result.stop_reason);
}

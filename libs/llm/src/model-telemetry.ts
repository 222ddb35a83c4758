import { type Context, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { observedGauge, quillMetrics } from '@quill/telemetry';
import type { CircuitBreaker } from './circuit-breaker.ts';
import type { LlmCallError } from './errors.ts';
import type { ChatRequest, LlmCallResult } from './types.ts';

const tracer = trace.getTracer('@quill/llm');

/**
 * One span per provider attempt, named and attributed by the OpenTelemetry GenAI semantic
 * conventions (`chat <model>`, `gen_ai.*`), plus Quill's run attributes (docs/operations.md
 * "Traces"). The fetch span of the call nests under it.
 */
export function startModelSpan(provider: string, model: string, request: ChatRequest): Span {
  return tracer.startSpan(`chat ${model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'quill.run_id': request.runId,
      'quill.role': request.role,
      ...(request.sessionId ? { 'quill.session_id': request.sessionId } : {}),
    },
  });
}

/**
 * Runs each step of one attempt's provider stream inside the attempt's span, so its I/O nests
 * there. The span's context is made once per caller context, not once per step (a stream steps
 * once per delta; docs/decisions/0034-per-frame-work-off-the-token-path.md).
 */
export function spanSteps(span: Span): <T>(step: () => Promise<T>) => Promise<T> {
  let parent: Context | undefined;
  let scoped: Context | undefined;
  return (step) => {
    const active = context.active();
    if (active !== parent || !scoped) {
      parent = active;
      scoped = trace.setSpan(active, span);
    }
    return context.with(scoped, step);
  };
}

export function inSpanSync<T>(span: Span, make: () => T): T {
  return context.with(trace.setSpan(context.active(), span), make);
}

export function endModelSpanOk(
  span: Span,
  attempt: { provider: string; role: string; startedAtEpochMs: number },
  result: LlmCallResult,
): void {
  span.setAttributes({
    'gen_ai.response.model': result.model,
    'gen_ai.usage.input_tokens': result.usage.prompt_tokens,
    'gen_ai.usage.output_tokens': result.usage.completion_tokens,
    'gen_ai.response.finish_reasons': [result.finishReason],
  });
  span.end();
  const metrics = quillMetrics();
  const labels = { provider: attempt.provider, model: result.model };
  metrics.modelCalls.add(1, { ...labels, outcome: 'ok' });
  metrics.modelTokens.add(result.usage.prompt_tokens, { ...labels, 'gen_ai.token.type': 'input' });
  metrics.modelTokens.add(result.usage.completion_tokens, { ...labels, 'gen_ai.token.type': 'output' });
  if (result.firstTokenAt !== undefined) {
    metrics.modelTimeToFirstToken.record(
      Math.max(0, (result.firstTokenAt - attempt.startedAtEpochMs) / 1000),
      {
        ...labels,
        role: attempt.role,
      },
    );
  }
}

export function endModelSpanFailed(span: Span, provider: string, model: string, error: LlmCallError): void {
  // An author's stop is not a failure of the call (no false error spans).
  if (error.kind !== 'aborted') {
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.kind });
    span.setAttribute('error.type', error.status === undefined ? error.kind : String(error.status));
  }
  if (error.usage) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': error.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': error.usage.completion_tokens,
    });
  }
  span.end();
  quillMetrics().modelCalls.add(1, {
    provider,
    model,
    outcome: 'failed',
    error_kind: error.kind,
    ...(error.status === undefined ? {} : { http_status: String(error.status) }),
  });
}

export function countFailover(from: string, to: string, reason: string): void {
  quillMetrics().modelFailovers.add(1, { from_provider: from, to_provider: to, reason });
}

const BREAKER_VALUES = { closed: 0, half_open: 1, probe: 1, open: 2 } as const;

/** The breaker as this process last saw it, per provider: 0 closed, 1 half-open, 2 open. */
export function observingBreaker(breaker: CircuitBreaker): CircuitBreaker {
  const record = observedGauge(
    'quill.model.breaker_state',
    'provider breaker: 0 closed, 1 half-open, 2 open',
  );
  const seen = <T extends keyof typeof BREAKER_VALUES>(provider: string, state: T): T => {
    record(BREAKER_VALUES[state], { provider });
    return state;
  };
  return {
    admit: async (provider) => seen(provider, await breaker.admit(provider)),
    admitFirst: async (sessionId, providers) => {
      const first = await breaker.admitFirst(sessionId, providers);
      seen(first.provider, first.admission);
      return first;
    },
    recordSuccess: async (provider) => seen(provider, await breaker.recordSuccess(provider)),
    recordFailure: async (provider) => seen(provider, await breaker.recordFailure(provider)),
  };
}

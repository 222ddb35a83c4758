import type { RedisClient, RedisKeys } from '@quill/redis';
import { type BreakerSettings, type CircuitBreaker, createCircuitBreaker } from './circuit-breaker.ts';
import { createLlmClient, type LlmTimeouts } from './client.ts';
import { canFailOver, isProviderFailure, LlmCallError } from './errors.ts';
import { trimTranscript } from './intra-run-trimmer.ts';
import {
  countFailover,
  endModelSpanFailed,
  endModelSpanOk,
  inSpan,
  inSpanSync,
  observingBreaker,
  startModelSpan,
} from './model-telemetry.ts';
import { type LlmProvider, modelFor } from './provider.ts';
import { createSessionPins, type SessionPins } from './session-pin.ts';
import { encodingForModel } from './token-estimate.ts';
import type { ChatRequest, LlmAttempt, LlmCallResult, LlmClient, LlmEvent, LlmLogger } from './types.ts';

export interface FailoverClientOptions {
  /** The primary first, then the optional backup. */
  providers: readonly LlmProvider[];
  redis: RedisClient;
  keys: RedisKeys;
  timeouts: LlmTimeouts;
  breaker: BreakerSettings;
  pinTtlMs: number;
  logger?: LlmLogger;
}

/** A call tries at most the first-choice provider and, once, the other one. */
export const MAX_PROVIDER_ATTEMPTS = 2;

export interface FailoverLlmClient extends LlmClient {
  readonly providers: readonly LlmProvider[];
}

/**
 * The model client the workers and the gateway use (docs/agent-behaviour.md `FailoverChatModel`): every call
 * goes to the session's pinned provider (else the primary) unless its shared breaker is open, and
 * moves to the other provider once when the first fails before producing any output. After
 * output has started, switching would show the author two different answers spliced together,
 * so the error surfaces instead.
 */
export function createFailoverClient(options: FailoverClientOptions): FailoverLlmClient {
  if (options.providers.length === 0 || options.providers.length > MAX_PROVIDER_ATTEMPTS) {
    throw new Error(`between 1 and ${MAX_PROVIDER_ATTEMPTS} model providers are supported`);
  }
  const clients = new Map(
    options.providers.map((provider) => [
      provider.name,
      createLlmClient({
        provider,
        timeouts: options.timeouts,
        ...(options.logger ? { logger: options.logger } : {}),
      }),
    ]),
  );
  const breaker = failOpen(
    observingBreaker(createCircuitBreaker(options.redis, options.keys, options.breaker)),
    options.logger,
  );
  const pins = createSessionPins(options.redis, options.keys, options.pinTtlMs);
  const primary = options.providers[0]!;
  return {
    provider: { name: primary.name, model: primary.model },
    providers: options.providers,
    streamChat: (request) =>
      streamWithFailover(
        { providers: options.providers, logger: options.logger, clients, breaker, pins },
        request,
      ),
  };
}

interface FailoverContext {
  providers: readonly LlmProvider[];
  logger: LlmLogger | undefined;
  clients: Map<string, LlmClient>;
  breaker: CircuitBreaker;
  pins: SessionPins;
}

async function* streamWithFailover(
  context: FailoverContext,
  request: ChatRequest,
): AsyncGenerator<LlmEvent, LlmCallResult, undefined> {
  const order = await providerOrder(context, request.sessionId);
  const attempts: LlmAttempt[] = [];
  let lastError: LlmCallError | undefined;
  for (const [position, provider] of order.entries()) {
    const admission = await context.breaker.admit(provider.name);
    const next = order[position + 1];
    if (admission === 'open') {
      lastError = new LlmCallError({ provider: provider.name, kind: 'circuit_open', outputStarted: false });
      if (next) logSwitch(context, request, provider, next, 'circuit_open');
      continue;
    }
    const target = modelFor(provider, request.role);
    const fitted = trimTranscript(request.messages, {
      maxInputTokens: target.maxInputTokens,
      ...(request.tools ? { tools: request.tools } : {}),
      encoding: encodingForModel(target.model),
    });
    if (fitted.trimmedToolResults > 0 || fitted.overBudget) {
      context.logger?.warn(
        {
          provider: provider.name,
          run_id: request.runId,
          trimmed_tool_results: fitted.trimmedToolResults,
          estimated_tokens: fitted.estimatedTokens,
          max_input_tokens: target.maxInputTokens,
          over_budget: fitted.overBudget,
        },
        'transcript trimmed to fit the model context window',
      );
    }
    const startedAt = performance.now();
    const startedAtEpochMs = performance.timeOrigin + startedAt;
    const span = startModelSpan(provider.name, target.model, request);
    const stream = inSpanSync(span, () =>
      context.clients
        .get(provider.name)!
        // This layer reports attempts itself (with their index), so the provider client's hook is unset.
        .streamChat({ ...request, messages: fitted.messages, model: target.model, onAttempt: undefined }),
    );
    let done = false;
    try {
      let step = await inSpan(span, () => stream.next());
      while (!step.done) {
        yield step.value;
        step = await inSpan(span, () => stream.next());
      }
      done = true;
      const result = step.value;
      endModelSpanOk(span, { provider: provider.name, role: request.role, startedAtEpochMs }, result);
      attempts.push({
        index: attempts.length,
        provider: provider.name,
        model: result.model,
        outcome: 'ok',
        usage: result.usage,
        outputStarted: result.firstTokenAt !== undefined,
        durationMs: performance.now() - startedAt,
        trimmedToolResults: fitted.trimmedToolResults,
      });
      request.onAttempt?.(attempts.at(-1)!);
      await context.breaker.recordSuccess(provider.name);
      if (request.sessionId) {
        await context.pins.set(request.sessionId, provider.name).catch((error: unknown) => {
          context.logger?.warn({ err: error, session_id: request.sessionId }, 'could not pin the session');
        });
      }
      return { ...result, failovers: position, attempts };
    } catch (error) {
      done = true;
      if (!(error instanceof LlmCallError)) {
        span.end();
        throw error;
      }
      endModelSpanFailed(span, provider.name, target.model, error);
      attempts.push({
        index: attempts.length,
        provider: provider.name,
        model: target.model,
        outcome: 'failed',
        usage: error.usage ?? {
          prompt_tokens: 0,
          completion_tokens: 0,
          total_tokens: 0,
          usage_source: 'estimate',
        },
        errorKind: error.kind,
        ...(error.status === undefined ? {} : { status: error.status }),
        outputStarted: error.outputStarted,
        durationMs: performance.now() - startedAt,
        trimmedToolResults: fitted.trimmedToolResults,
      });
      request.onAttempt?.(attempts.at(-1)!);
      await recordOutcome(context.breaker, provider.name, error);
      lastError = error;
      if (next && canFailOver(error) && request.signal?.aborted !== true) {
        logSwitch(context, request, provider, next, describe(error));
        continue;
      }
      throw error;
    } finally {
      // The caller stopped iterating (author stop): close the provider stream and its timers.
      if (!done) {
        span.end();
        await stream.return(undefined as never).catch(() => undefined);
      }
    }
  }
  throw lastError ?? new LlmCallError({ provider: 'none', kind: 'circuit_open', outputStarted: false });
}

/**
 * Redis holds only hints (breaker state, pins): when it is unreachable, calls go on as if every
 * breaker were closed rather than failing the author's run over bookkeeping.
 */
function failOpen(breaker: CircuitBreaker, logger: LlmLogger | undefined): CircuitBreaker {
  const guard = async <T>(action: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      logger?.warn({ err: error }, 'circuit breaker unavailable; treating it as closed');
      return fallback;
    }
  };
  return {
    admit: (provider) => guard(() => breaker.admit(provider), 'closed'),
    recordSuccess: (provider) => guard(() => breaker.recordSuccess(provider), 'closed'),
    recordFailure: (provider) => guard(() => breaker.recordFailure(provider), 'closed'),
  };
}

/** The pinned provider first when the pin names one we have, else the configured order. */
async function providerOrder(context: FailoverContext, sessionId: string | undefined) {
  const pinned = sessionId ? await context.pins.get(sessionId).catch(() => undefined) : undefined;
  const first = context.providers.find((provider) => provider.name === pinned);
  if (!first) return [...context.providers];
  return [first, ...context.providers.filter((provider) => provider !== first)];
}

/**
 * A provider failure counts against the breaker; any other answer (a 400, a finished stream)
 * proves the provider is up. An abort says nothing about the provider.
 */
async function recordOutcome(breaker: CircuitBreaker, provider: string, error: LlmCallError) {
  if (error.kind === 'aborted') return;
  if (isProviderFailure(error)) await breaker.recordFailure(provider);
  else await breaker.recordSuccess(provider);
}

function describe(error: LlmCallError): string {
  return error.status === undefined ? error.kind : `${error.kind}_${error.status}`;
}

function logSwitch(
  context: FailoverContext,
  request: ChatRequest,
  from: LlmProvider,
  to: LlmProvider,
  reason: string,
) {
  countFailover(from.name, to.name, reason);
  context.logger?.warn(
    {
      run_id: request.runId,
      session_id: request.sessionId,
      role: request.role,
      from_provider: from.name,
      to_provider: to.name,
      reason,
    },
    'model provider failover',
  );
}

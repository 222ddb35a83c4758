import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient, RedisKeys } from '@quill/redis';
import {
  type BreakerSettings,
  type CircuitBreaker,
  createCircuitBreaker,
  type FirstAdmission,
} from './circuit-breaker.ts';
import { createLlmClient, type LlmTimeouts } from './client.ts';
import { canFailOver, canRetrySameProvider, isProviderFailure, LlmCallError } from './errors.ts';
import { fitTranscript } from './intra-run-trimmer.ts';
import {
  countFailover,
  endModelSpanFailed,
  endModelSpanOk,
  inSpanSync,
  observingBreaker,
  spanSteps,
  startModelSpan,
} from './model-telemetry.ts';
import { type LlmProvider, modelFor } from './provider.ts';
import { sameProviderRetryDelay } from './retry-after.ts';
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
  /** Same-provider retries (no other provider left): the wait without `retry-after`, and its cap. */
  retry?: RetrySettings;
  logger?: LlmLogger;
}

export interface RetrySettings {
  defaultMs: number;
  capMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { defaultMs: 1_000, capMs: 10_000 };

/**
 * A call makes at most two attempts: the first-choice provider, then once the other one, or
 * the same one again when there is no other to go to.
 */
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
    readAdmission: (sessionId) => firstAdmission({ providers: options.providers, breaker }, sessionId),
    streamChat: (request) =>
      streamWithFailover(
        {
          providers: options.providers,
          logger: options.logger,
          clients,
          breaker,
          pins,
          retry: options.retry ?? DEFAULT_RETRY,
        },
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
  retry: RetrySettings;
}

async function* streamWithFailover(
  context: FailoverContext,
  request: ChatRequest,
): AsyncGenerator<LlmEvent, LlmCallResult, undefined> {
  const first = await (request.admission ?? firstAdmission(context, request.sessionId));
  // Grows by the same provider again when a retry of it is due (see canRetrySameProvider).
  const queue = providerOrder(context.providers, first.provider);
  const attempts: LlmAttempt[] = [];
  let lastError: LlmCallError | undefined;
  let switches = 0;
  for (let position = 0; position < queue.length; position++) {
    const provider = queue[position]!;
    const admission = position === 0 ? first.admission : await context.breaker.admit(provider.name);
    const next = queue[position + 1];
    if (admission === 'open') {
      lastError = new LlmCallError({ provider: provider.name, kind: 'circuit_open', outputStarted: false });
      if (next) switches += logSwitch(context, request, provider, next, 'circuit_open');
      continue;
    }
    const target = request.targets?.[provider.name] ?? modelFor(provider, request.role);
    const trim = {
      maxInputTokens: target.maxInputTokens,
      ...(request.tools ? { tools: request.tools } : {}),
      encoding: encodingForModel(target.model),
    };
    const fitted = await fitTranscript(request.messages, trim);
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
    const inAttempt = spanSteps(span);
    try {
      let step = await inAttempt(() => stream.next());
      while (!step.done) {
        yield step.value;
        step = await inAttempt(() => stream.next());
      }
      done = true;
      const result = step.value;
      endModelSpanOk(span, { provider: provider.name, role: request.role, startedAtEpochMs }, result);
      attempts.push({
        index: attempts.length,
        provider: provider.name,
        // The model asked for, as a failed attempt names it: one name per model in the usage rows.
        model: target.model,
        outcome: 'ok',
        usage: result.usage,
        outputStarted: result.text !== '' || result.toolCalls.length > 0,
        durationMs: performance.now() - startedAt,
        trimmedToolResults: fitted.trimmedToolResults,
      });
      request.onAttempt?.(attempts.at(-1)!);
      // Independent hints (neither rejects), written together and not waited for: the reply is
      // the caller's now, and the next call of this process finds them (one Redis connection
      // keeps its commands in order); another replica may read the previous hint for a moment.
      void Promise.all([
        context.breaker.recordSuccess(provider.name),
        request.sessionId
          ? context.pins.set(request.sessionId, provider.name).catch((error: unknown) => {
              context.logger?.warn(
                { err: error, session_id: request.sessionId },
                'could not pin the session',
              );
            })
          : undefined,
      ]);
      return { ...result, failovers: switches, attempts };
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
      if (request.signal?.aborted === true) throw error;
      if (next && canFailOver(error)) {
        switches += logSwitch(context, request, provider, next, describe(error));
        continue;
      }
      const delay = retryDelay(context, attempts.length, next, error);
      if (delay === undefined) throw error;
      logRetry(context, request, provider, describe(error), delay);
      await waitBeforeRetry(delay, request.signal, provider.name);
      queue.push(provider);
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
 * With no other provider left to try, a failure that may pass is retried on the same provider
 * once, after the wait it asked for (`retry-after`, capped: see retry-after.ts).
 */
function retryDelay(
  context: FailoverContext,
  attemptsMade: number,
  next: LlmProvider | undefined,
  error: LlmCallError,
): number | undefined {
  if (next || attemptsMade >= MAX_PROVIDER_ATTEMPTS || !canRetrySameProvider(error)) return undefined;
  return sameProviderRetryDelay(error.retryAfterMs, context.retry);
}

/** The wait before a retry; an author's stop during it ends the call as aborted. */
async function waitBeforeRetry(ms: number, signal: AbortSignal | undefined, provider: string): Promise<void> {
  try {
    await sleep(ms, undefined, signal ? { signal } : {});
  } catch (error) {
    throw new LlmCallError({ provider, kind: 'aborted', outputStarted: false, cause: error });
  }
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
    // As the pin read alone did: an unreadable pin leaves the configured order.
    admitFirst: (sessionId, providers) =>
      guard(() => breaker.admitFirst(sessionId, providers), {
        provider: providers[0]!,
        admission: 'closed' as const,
      }),
    recordSuccess: (provider) => guard(() => breaker.recordSuccess(provider), 'closed'),
    recordFailure: (provider) => guard(() => breaker.recordFailure(provider), 'closed'),
  };
}

/**
 * The provider a call goes to first and its admission: for a session, the one its pin names
 * (when configured) read with the admission in one round trip; else the first configured.
 */
async function firstAdmission(
  context: Pick<FailoverContext, 'providers' | 'breaker'>,
  sessionId: string | undefined,
): Promise<FirstAdmission> {
  const configured = context.providers[0]!.name;
  if (!sessionId) return { provider: configured, admission: await context.breaker.admit(configured) };
  return context.breaker.admitFirst(
    sessionId,
    context.providers.map((provider) => provider.name),
  );
}

/** `first` first, then the others in the configured order. */
function providerOrder(providers: readonly LlmProvider[], first: string): LlmProvider[] {
  const chosen = providers.find((provider) => provider.name === first);
  if (!chosen) return [...providers];
  return [chosen, ...providers.filter((provider) => provider !== chosen)];
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

function logRetry(
  context: FailoverContext,
  request: ChatRequest,
  provider: LlmProvider,
  reason: string,
  delayMs: number,
) {
  context.logger?.warn(
    { run_id: request.runId, role: request.role, provider: provider.name, reason, delay_ms: delayMs },
    'model provider retry',
  );
}

/** Logs and counts a switch; returns 1 (one more switch in this call). */
function logSwitch(
  context: FailoverContext,
  request: ChatRequest,
  from: LlmProvider,
  to: LlmProvider,
  reason: string,
): number {
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
  return 1;
}

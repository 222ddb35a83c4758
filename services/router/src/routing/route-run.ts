import { type Bus, publishEnvelope, publishFrame } from '@quill/bus';
import { frame, msgIds, type RunStartEnvelope, UsageEnvelope } from '@quill/contracts';
import { getProject, listWaitingRuns, type RoutingContext, readRoutingContext } from '@quill/db';
import { mergeMessageRouting } from '@quill/db/router';
import { collectChat, type LlmClient } from '@quill/llm';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { PhaseWriter } from '../phases/phase-writer.ts';
import { type Continuation, deterministicRoute } from './continuations.ts';
import { defaultDecision, parseRouterAnswer, type RouterDecision } from './router-decision.ts';
import { buildRouterUserMessage, ROUTER_PROMPT } from './router-prompt.ts';
import { type RoutingRecord, type RoutingSource, readRoutingRecord, routingLine } from './routing-record.ts';

export interface RoutingDependencies {
  bus: Bus;
  pool: Pool;
  /** The router model; only called when no deterministic route applies. */
  llm: LlmClient;
  strategy: 'llm' | 'off';
  phases: PhaseWriter;
}

/** Usage of the routing call sits above any worker call index (step * 1000 + turn). */
export const ROUTER_CALL_INDEX = 1_000_000;

/**
 * What routing decides from, in one statement (the run row is read meanwhile: nothing here
 * depends on the run's pickup, which changes only the phases; a takeover needs only the stored
 * routing).
 */
export function readRouting(pool: Pool, start: RunStartEnvelope): Promise<RoutingContext> {
  return readRoutingContext(pool, {
    sessionId: start.session_id,
    messageId: start.message_id,
    runId: start.run_id,
    projectId: start.project_id,
  });
}

/** The route as far as it is decided without the model; `chosen` undefined means the model decides. */
interface Prepared {
  stored?: RoutingRecord;
  chosen?: Continuation;
  strategy: 'llm' | 'off';
  firstMessage: boolean;
  clarificationPending: boolean;
  previous: RoutingRecord | undefined;
  previousAssistant: string | undefined;
}

function prepare(strategyOption: 'llm' | 'off', start: RunStartEnvelope, reads: RoutingContext): Prepared {
  const { previousAssistant, clarificationPending, answeredBefore } = reads;
  // The newest readable record: older ones are parsed only when a newer one is unreadable.
  let previous: RoutingRecord | undefined;
  for (let index = reads.priorRoutings.length - 1; index >= 0 && !previous; index--) {
    previous = readRoutingRecord(reads.priorRoutings[index]);
  }
  // Quality mode forces model routing (docs/agent-behaviour.md step 3); fast follows AGENT_ROUTER_STRATEGY.
  const strategy = start.generation_mode === 'quality' ? 'llm' : strategyOption;
  const stored = readRoutingRecord(reads.storedRouting);
  let chosen = deterministicRoute({
    message: start.message,
    previous,
    clarificationPending,
    strategy,
    previousAssistant,
  });
  if (!chosen && strategy === 'off')
    chosen = { decision: defaultDecision(), source: 'off', clarifyFirst: false };
  return {
    ...(stored ? { stored } : {}),
    ...(chosen ? { chosen } : {}),
    strategy,
    firstMessage: !answeredBefore,
    clarificationPending,
    previous,
    previousAssistant,
  };
}

function recordOf(chosen: Continuation, prepared: Prepared, start: RunStartEnvelope): RoutingRecord {
  return toRecord(chosen.decision, chosen.source, {
    firstMessage: prepared.firstMessage,
    clarifyFirst: chosen.clarifyFirst,
    quality: start.generation_mode === 'quality',
  });
}

/**
 * Routes a run once: a stored decision (a takeover) is reused; otherwise the deterministic
 * continuations run, then the model (llm strategy, or always in quality mode), falling back to
 * the writer alone when the model's answer is unusable. Never throws for a bad answer: the run
 * goes on with the safe default and the problem is logged.
 */
export async function routeRun(
  dependencies: RoutingDependencies,
  start: RunStartEnvelope,
  logger: Logger,
  signal?: AbortSignal,
  reads?: Promise<RoutingContext>,
): Promise<RoutingRecord> {
  const { pool } = dependencies;
  const prepared = prepare(dependencies.strategy, start, await (reads ?? readRouting(pool, start)));
  if (prepared.stored) {
    await publishRouting(dependencies.bus, start.run_id, prepared.stored);
    return prepared.stored;
  }
  // A run stopped before it was routed is not routed at all: no model call, nothing stored.
  if (signal?.aborted) return unrouted();
  const { clarificationPending, firstMessage, previous, previousAssistant } = prepared;
  let chosen = prepared.chosen;
  if (!chosen) {
    const project = firstMessage ? await getProject(pool, start.project_id) : null;
    const userMessage = buildRouterUserMessage({
      message: start.message,
      ...(firstMessage ? { firstMessageProjectLabel: project?.projectType ?? 'novel' } : {}),
      ...(previousAssistant !== undefined ? { previousAssistant } : {}),
      ...(previous?.outcome ? { statusCard: statusCard(previous) } : {}),
      ...(previous ? { previousRouting: routingLine(previous) } : {}),
    });
    const answered = await askRouterModel(dependencies, start, userMessage, logger, signal);
    if (signal?.aborted) return unrouted();
    chosen = answered
      ? { decision: answered, source: 'llm', clarifyFirst: false }
      : { decision: defaultDecision(), source: 'fallback', clarifyFirst: false };
  }

  const record = recordOf(chosen, prepared, start);
  if (clarificationPending) {
    // The author answered: the waiting run is over and the pending flag is consumed (typed state,
    // never guessed from punctuation).
    for (const waiting of await listWaitingRuns(pool, start.session_id, start.run_id)) {
      await dependencies.phases.endRun(
        { runId: waiting, sessionId: start.session_id },
        { phase: 'done', stopReason: 'clarification_answered' },
      );
    }
    await dependencies.phases.setSession(start.session_id, 'running', { clarificationPending: false });
  }
  logger.info(
    { routing: { agent: record.current_agent, plan: record.workflow_agents, source: record.source } },
    'run routed',
  );
  // Stored and announced together; a takeover reuses the stored record and its frame's msg id
  // drops a repeat.
  await Promise.all([
    mergeMessageRouting(pool, start.message_id, record),
    publishRouting(dependencies.bus, start.run_id, record),
  ]);
  return record;
}

function toRecord(
  decision: RouterDecision,
  source: RoutingSource,
  flags: { firstMessage: boolean; clarifyFirst: boolean; quality: boolean },
): RoutingRecord {
  return {
    v: 1,
    ...decision,
    source,
    first_message: flags.firstMessage,
    clarify_first: flags.clarifyFirst,
    auto_review: flags.quality && !flags.firstMessage && !decision.read_only && !flags.clarifyFirst,
  };
}

function unrouted(): RoutingRecord {
  return toRecord(defaultDecision(), 'off', { firstMessage: false, clarifyFirst: false, quality: false });
}

function statusCard(previous: RoutingRecord): string {
  const outcome = previous.outcome!;
  const agent = outcome.last_agent ? `；最后工作的角色：${outcome.last_agent}` : '';
  return `[状态卡] 上一轮结果：${outcome.reason}${agent}`;
}

async function askRouterModel(
  dependencies: RoutingDependencies,
  start: RunStartEnvelope,
  userMessage: string,
  logger: Logger,
  signal: AbortSignal | undefined,
): Promise<RouterDecision | undefined> {
  try {
    const result = await collectChat(
      dependencies.llm.streamChat({
        messages: [
          { role: 'system', content: ROUTER_PROMPT },
          { role: 'user', content: userMessage },
        ],
        role: 'router',
        runId: start.run_id,
        sessionId: start.session_id,
        ...(signal ? { signal } : {}),
      }),
    );
    // One usage record per provider attempt (a failover is two), like the workers' calls.
    const attempts = result.attempts ?? [
      { index: 0, provider: result.provider, model: result.model, usage: result.usage },
    ];
    for (const attempt of attempts) {
      await publishEnvelope(
        dependencies.bus,
        dependencies.bus.names.usage(start.run_id),
        UsageEnvelope,
        {
          v: 1,
          run_id: start.run_id,
          user_id: start.user_id,
          call_index: ROUTER_CALL_INDEX,
          attempt: attempt.index,
          role: 'router',
          provider: attempt.provider,
          model: attempt.model,
          usage: attempt.usage,
        },
        { msgId: msgIds.usage(start.run_id, ROUTER_CALL_INDEX, attempt.index), quiet: true },
      );
    }
    const parsed = parseRouterAnswer(result.text);
    if (parsed.ok) return parsed.decision;
    logger.warn(
      { problem: parsed.problem, answer: result.text.slice(0, 500) },
      'router answer unusable; writer fallback',
    );
  } catch (error) {
    logger.warn({ err: error }, 'router model call failed; writer fallback');
  }
  return undefined;
}

async function publishRouting(bus: Bus, runId: string, record: RoutingRecord): Promise<void> {
  await publishFrame(
    bus,
    frame('routing_decided', runId, {
      agent: record.current_agent,
      workflow_plan: record.workflow_plan,
      workflow_agents: record.workflow_agents,
      read_only: record.read_only,
      write_content: record.write_content,
      scope: record.scope,
      source: record.source,
    }),
    { msgId: msgIds.routing(runId) },
  );
}

import { publishEnvelope, serveRequests } from '@quill/bus';
import { ContextCompileReply, ContextCompileRequest, msgIds, UsageEnvelope } from '@quill/contracts';
import { createFailoverClientFromSettings, estimateTextTokens, warmTokenizer } from '@quill/llm';
import { startService } from '@quill/service-kit';
import { createContextCompiler, fixedPromptTexts } from './compiler.ts';
import { createProjectTexts } from './project-texts.ts';
import { startPromptRetention } from './prompt-retention.ts';
import { createTextCache, observeTextCache } from './text-cache.ts';

const runtime = await startService('context');
const { bus, config, logger } = runtime;
// The summariser of history compaction is the only model call this service makes.
const llm = createFailoverClientFromSettings(config, { redis: runtime.redis, keys: runtime.keys, logger });
// Summaries are billed like any model call; their call index sits above the workers' (step * 1000 + turn).
const SUMMARY_CALL_INDEX = 900_000;

// Otherwise the first compile after a start tokenises the whole system prompt (~5 ms of BPE on
// the path to the first token); after the tokenizer's own warm-up, which leaves the event loop
// free while the service connects.
void warmTokenizer().then(() => {
  for (const text of fixedPromptTexts()) estimateTextTokens(text);
});

const textCache = createTextCache(config.CONTEXT_TEXT_CACHE_MB * 1024 * 1024);
observeTextCache(textCache);
const compile = createContextCompiler({
  pool: runtime.pool,
  llm,
  logger,
  texts: createProjectTexts(runtime.pool, textCache),
  settings: {
    contextTokens: config.AGENT_CONTEXT_TOKEN_BUDGET,
    historyTokens: config.AGENT_CHAT_HISTORY_TOKEN_BUDGET,
    ledgerCeiling: config.derived.promptLedgerCeilingTokens,
    skillTokens: config.AGENT_SKILL_TOKEN_BUDGET,
    workingSet: {
      maxFiles: config.AGENT_WORKING_SET_MAX_FILES,
      maxChars: config.AGENT_WORKING_SET_MAX_CHARS,
    },
    compactionEnabled: config.AGENT_HISTORY_COMPACTION_ENABLED,
  },
  async onSummaryUsage(request, usage, provider, model) {
    const callIndex = SUMMARY_CALL_INDEX + (request.step ?? 0);
    await publishEnvelope(
      bus,
      bus.names.usage(request.run_id),
      UsageEnvelope,
      {
        v: 1,
        run_id: request.run_id,
        user_id: request.user_id,
        call_index: callIndex,
        attempt: 0,
        role: 'summarize',
        provider,
        model,
        usage,
      },
      { msgId: msgIds.usage(request.run_id, callIndex, 0), quiet: true },
    );
  },
});

const responder = serveRequests(
  bus,
  bus.names.contextCompile,
  { request: ContextCompileRequest, reply: ContextCompileReply },
  {
    handle: compile,
    invalidReply: { v: 1, ok: false, code: 'invalid_bus_message' },
    failureReply: { v: 1, ok: false, code: 'context_unavailable' },
  },
  logger,
);
const stopPromptRetention = startPromptRetention({
  pool: runtime.pool,
  logger,
  retentionMs: config.derived.storedPromptRetentionMs,
});
runtime.onShutdown(async () => {
  await responder.stop();
  await stopPromptRetention();
  // Traces of the last compiles are written before the pool closes.
  await compile.settled();
});
runtime.markReady();
logger.info({ instance: config.instanceId }, 'context ready');

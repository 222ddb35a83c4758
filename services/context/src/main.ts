import { serveRequests } from '@quill/bus';
import { ContextCompileReply, ContextCompileRequest } from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { createContextCompiler } from './compiler.ts';

const runtime = await startService('context');
const { bus, config, logger } = runtime;
// Roughly 2 characters per token for mixed Chinese text; the token-accurate budgets come with
// the Context Compiler issue.
const compile = createContextCompiler(runtime.pool, {
  historyChars: config.AGENT_CHAT_HISTORY_TOKEN_BUDGET * 2,
  contextChars: config.AGENT_CONTEXT_TOKEN_BUDGET * 2,
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
runtime.onShutdown(() => responder.stop());
logger.info({ instance: config.instanceId }, 'context ready');

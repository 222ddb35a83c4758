import { z } from 'zod';

// Booleans accept only explicit spellings (STYLE 3): z.coerce.boolean() would read "false" as true.
const bool = z.enum(['true', '1', 'false', '0']).transform((value) => value === 'true' || value === '1');
const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);
const optionalString = z
  .string()
  .optional()
  .transform((value) => (value ? value : undefined));
// Unset or empty: the code falls back to a related setting (e.g. one provider's window to the default).
const optionalPositiveInt = z.preprocess(
  (value) => (value === '' ? undefined : value),
  z.coerce.number().int().min(1).optional(),
);

const outputTokensField = z.enum(['max_tokens', 'max_completion_tokens', 'none']).default('max_tokens');
const userField = z.enum(['user', 'safety_identifier', 'none']).default('user');
const quillHeaders = z
  .enum(['auto', 'true', '1', 'false', '0'])
  .default('auto')
  .transform((value) => (value === 'auto' ? ('auto' as const) : value === 'true' || value === '1'));

/** Every setting with the default that runs locally (docs/agent-behaviour.md §四). Names are the env var names. */
export const ConfigSchema = z.object({
  QUILL_ENV_PRIORITY: z.enum(['dotenv', 'process', 'none']).default('dotenv'),
  QUILL_ENV_FILE: z.string().default('.env'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SERVICE_INSTANCE_ID: optionalString,

  NATS_URL: z.string().default('nats://127.0.0.1:4222'),
  REDIS_URL: z.string().default('redis://127.0.0.1:6379'),
  DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/quill'),
  DATABASE_POOL_MAX: int(10, 1),
  // Kept open while idle (capped at the max): the launch path does not reconnect after a pause.
  DATABASE_POOL_MIN: int(4),
  // How long a connection above the min idles before it closes: longer than an author's pause
  // between messages, so the launch after it does not reopen the ones its parallel reads use.
  DATABASE_POOL_IDLE_S: int(300, 1),
  // Parameterised statements are prepared once per connection (docs/decisions/0042); off behind a
  // pooler in transaction mode that does not keep prepared statements (PgBouncer before 1.21).
  DATABASE_PREPARED_STATEMENTS: bool.default(true),
  // How long an AI write retries a database fault (connection reset, too many clients,
  // serialization failure) before its step fails as storage_unavailable (docs/ai-writes.md).
  DATABASE_WRITE_RETRY_MS: int(30_000, 0),
  QUILL_BUS_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_]{0,32}$/)
    .default(''),
  QUILL_REDIS_PREFIX: z.string().default(''),

  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString,
  OTEL_TRACES_SAMPLER_RATIO: z.coerce.number().min(0).max(1).default(1),
  // Unset: derived from the entry file (services/<name>/src/main.ts → quill-<name>).
  OTEL_SERVICE_NAME: optionalString,
  // The OTel spec's variables (docs/operations.md "Traces"): the wire encoding of the trace export,
  // and `key=value,…` resource attributes (e.g. k8s.pod.name) merged under the service's own.
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json', 'grpc']).default('http/protobuf'),
  OTEL_RESOURCE_ATTRIBUTES: z.string().default(''),
  // The health + metrics port every service serves (/livez, /readyz, /metrics; docs/operations.md):
  // 0 picks a free port (several services on one machine); deployments set a fixed one.
  OPS_HOST: z.string().default('127.0.0.1'),
  OPS_PORT: int(0, 0, 65_535),
  // How long a dependency (NATS) may be down before /readyz fails: a short blip must not take
  // every replica out of its Service at once (docs/operations.md "Probes").
  OPS_READY_DEPENDENCY_GRACE_S: int(30, 0),

  GATEWAY_HOST: z.string().default('127.0.0.1'),
  GATEWAY_PORT: int(8080),
  GATEWAY_BODY_LIMIT_BYTES: int(1_048_576, 1024),
  // Behind a load balancer the client address (rate limits, logs) comes from X-Forwarded-For.
  GATEWAY_TRUST_PROXY: bool.default(false),
  GATEWAY_RATE_LIMIT_PER_MINUTE: int(30, 1),
  // How long a gateway remembers who an API key or a token's user is, instead of reading them
  // for every request; a revoked key is forgotten at once on every gateway (a broadcast, and a
  // reconnect forgets every key), this bounds a gateway cut off from the bus. 0: read every time.
  GATEWAY_AUTH_CACHE_TTL_MS: int(60_000, 0, 300_000),
  // The built web app the gateway serves at `/` (README "Web app"); empty: apps/web/dist if built.
  GATEWAY_WEB_DIST: z.string().default(''),
  // Browser origins allowed to call the API cross-origin (CORS), comma-separated; empty: none.
  GATEWAY_CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value, context) => {
      const origins = value
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean);
      for (const origin of origins) {
        if (!isOrigin(origin)) context.addIssue({ code: 'custom', message: `not an origin: ${origin}` });
      }
      return origins;
    }),
  // HS256 key for the short-lived access tokens minted from an API key; production refuses the
  // default and weak keys (secrets.ts).
  AUTH_JWT_SECRET: z.string().min(16).default('quill-local-development-secret'),
  // Also the longest lifetime (exp − iat) a presented token may claim.
  AUTH_JWT_TTL_S: int(900, 60, 86_400),
  // An external identity provider (a hosting platform's login): its JWKS, and the `iss` / `aud`
  // its tokens must carry (both required once the URL is set) and their longest lifetime.
  AUTH_JWKS_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  AUTH_JWKS_ISSUER: optionalString,
  AUTH_JWKS_AUDIENCE: optionalString,
  AUTH_JWKS_MAX_LIFETIME_S: int(3600, 60, 86_400),

  LLM_PRIMARY_BASE_URL: z.string().default('http://127.0.0.1:4010/v1'),
  LLM_PRIMARY_API_KEY: z.string().default('quill-local-fake-key'),
  LLM_PRIMARY_MODEL: z.string().default('quill-fake-1'),
  LLM_BACKUP_BASE_URL: optionalString,
  LLM_BACKUP_API_KEY: optionalString,
  LLM_BACKUP_MODEL: optionalString,
  LLM_MAX_INPUT_TOKENS: int(128_000, 1),
  // Per-provider context windows (docs/agent-behaviour.md 坑 2: every model path declares one); unset = the default.
  LLM_PRIMARY_MAX_INPUT_TOKENS: optionalPositiveInt,
  LLM_BACKUP_MAX_INPUT_TOKENS: optionalPositiveInt,
  // `role=model[@max_input_tokens],…`, e.g. `router=gpt-4o-mini,suggest=gpt-4o-mini`.
  LLM_ROLE_MODEL_OVERRIDES: optionalString,
  LLM_BACKUP_ROLE_MODEL_OVERRIDES: optionalString,
  LLM_CONNECT_TIMEOUT_S: int(10, 1),
  LLM_FIRST_TOKEN_TIMEOUT_S: int(60, 1),
  // Longest silence between chunks once output has started.
  LLM_REQUEST_TIMEOUT_S: int(120, 1),
  LLM_BREAKER_FAILURE_THRESHOLD: int(5, 1),
  LLM_BREAKER_WINDOW_S: int(30, 1),
  LLM_BREAKER_COOLDOWN_S: int(30, 1),
  LLM_PIN_TTL_S: int(1800, 1),
  // A same-provider retry (no other provider left): the wait when the provider sent no
  // retry-after, and the longest retry-after honoured (a longer one fails the call at once).
  LLM_RETRY_DELAY_MS: int(1000, 0),
  LLM_RETRY_AFTER_MAX_S: int(10, 0),
  // The output cap sent with each call (docs/agent-behaviour.md "Provider requests"); `role=n,…`
  // overrides it per role, e.g. `router=1024,suggest=512`.
  LLM_MAX_OUTPUT_TOKENS: int(8192, 1),
  LLM_ROLE_MAX_OUTPUT_TOKENS: optionalString,
  // Per provider: the field the cap goes in, the field of the session's opaque end-user id,
  // whether to send prompt_cache_key, and whether x-quill-* headers go out (auto: loopback only).
  LLM_PRIMARY_OUTPUT_TOKENS_FIELD: outputTokensField,
  LLM_BACKUP_OUTPUT_TOKENS_FIELD: outputTokensField,
  LLM_PRIMARY_USER_FIELD: userField,
  LLM_BACKUP_USER_FIELD: userField,
  LLM_PRIMARY_PROMPT_CACHE_KEY: bool.default(false),
  LLM_BACKUP_PROMPT_CACHE_KEY: bool.default(false),
  LLM_PRIMARY_QUILL_HEADERS: quillHeaders,
  LLM_BACKUP_QUILL_HEADERS: quillHeaders,
  AGENT_MAX_OUTPUT_CONTINUATIONS: int(3),

  // llm: the router model picks the agent and plan; off: the writer alone (quality mode always routes).
  AGENT_ROUTER_STRATEGY: z.enum(['llm', 'off']).default('llm'),
  AGENT_COLLABORATION_MAX_ITERATIONS: int(12, 1),
  AGENT_TOOL_CALL_MAX_ITERATIONS: int(60, 1),
  AGENT_RUN_MAX_MODEL_CALLS: int(120, 1),
  // Prompt + completion tokens per run, counted across workers (docs/agent-behaviour.md 预算):
  // the model-call cap times the context budget, so a run whose calls average more than a full
  // context each across its whole allowance stops instead of burning the ledger ceiling 120 times.
  AGENT_RUN_MAX_TOKENS: int(3_840_000, 1),
  AGENT_RUN_WALL_CLOCK_TIMEOUT_S: int(780, 1),
  AGENT_SSE_HEARTBEAT_INTERVAL_S: int(15, 1),
  AGENT_AUTO_REVIEW_THRESHOLD_CHARS: int(500),
  AGENT_CONTEXT_TOKEN_BUDGET: int(32_000, 1),
  AGENT_CHAT_HISTORY_TOKEN_BUDGET: int(32_000, 1),
  // Context compiler: the request ledger shared by system prompt, turn context, working
  // set and history (only history shrinks to fit; also capped at LLM_MAX_INPUT_TOKENS), the
  // cross-turn working set, history compaction, and the per-request budget for skill text.
  AGENT_PROMPT_TOKEN_LEDGER_CEILING: int(160_000, 1),
  AGENT_WORKING_SET_MAX_FILES: int(8),
  AGENT_WORKING_SET_MAX_CHARS: int(60_000),
  AGENT_HISTORY_COMPACTION_ENABLED: bool.default(true),
  AGENT_SKILL_TOKEN_BUDGET: int(16_000, 1),
  // File texts a context replica keeps by file and version, so a compile reads and searches only
  // what changed (docs/decisions/0061); 0 reads every text from PostgreSQL each time.
  CONTEXT_TEXT_CACHE_MB: int(64),
  AGENT_DISCONNECT_GRACE_S: int(30),
  // After a stop, how long the router waits for the running step to save its capture and report.
  AGENT_STOP_GRACE_S: int(10, 1),
  AGENT_STEER_QUEUE_MAX: int(20, 1),
  // The longest a token waits in a frame for newer ones while the worker has room.
  AGENT_TEXT_FLUSH_MS: int(40, 1),
  // The same bound once the worker process is saturated (more tokens per frame); = FLUSH_MS turns that off.
  AGENT_TEXT_FLUSH_MAX_MS: int(60, 1),
  AGENT_TEXT_FLUSH_BYTES: int(512, 1),

  USER_MAX_CONCURRENT_RUNS: int(2, 1),
  SESSION_LOCK_TTL_MS: int(30_000, 1000),
  QUILL_DEFAULT_CREDITS: int(100),
  // A deleted project stays restorable this long (POST /projects/:projectId/restore).
  PROJECT_RESTORE_DAYS: int(30, 1, 3650),
  // Usage reports billing records in flight per replica, and how long one may take before redelivery.
  BILLING_USAGE_CONCURRENCY: int(16, 1),
  BILLING_USAGE_ACK_WAIT_S: int(30, 1),
  // Settlement reconciliation: how often a pass runs, and how long after a run ended (or started)
  // it is left to its router first.
  BILLING_RECONCILE_INTERVAL_S: int(30, 1),
  BILLING_RECONCILE_MIN_AGE_S: int(30),

  ROLES: z.string().default('planner,hook_designer,writer'),
  // Appended to every role prompt the service carries: a deploy-time prompt change without a
  // rebuild; it makes a new definition version that only new sessions get (docs/kernel.md).
  ROLE_PROMPT_REVISION: z.string().default(''),
  WORKER_CONCURRENCY: int(8, 1),
  // On SIGTERM a worker lets its in-flight steps finish for this long, then hands the rest back
  // with their journal (docs/ai-writes.md), so another worker continues them at once.
  WORKER_DRAIN_MS: int(3_000, 0),
  ROUTER_CONCURRENCY: int(64, 1),
  RUN_ACK_WAIT_S: int(30, 1),
  // A router renews a lease this long on each run it holds; peers hand back a run whose lease
  // lapsed, so takeover does not wait for the ack wait.
  ROUTER_RUN_LEASE_TTL_MS: int(3000, 300),
  RUN_MAX_DELIVER: int(5, 1),
  TASK_ACK_WAIT_S: int(30, 1),
  EVENTS_MAX_AGE_H: int(24, 1),
  // Retention in seconds instead, when set (tests let a run's stream expire to replay it from
  // the run archive, docs/architecture.md "Run archive").
  EVENTS_MAX_AGE_S: optionalPositiveInt,
  // The router's sweep of run rows (docs/architecture.md "What each service owns"): how often a
  // pass runs (one replica at a time), and how long after a run ended or started it waits.
  ROUTER_RECONCILE_INTERVAL_S: int(30, 1),
  ROUTER_RECONCILE_MIN_AGE_S: int(30),
  NATS_REQUEST_TIMEOUT_MS: int(10_000, 100),
  // All attempts of one request together: retried within it to reach a live replica.
  NATS_REQUEST_DEADLINE_MS: int(30_000, 100),
  // A JetStream publish whose ack did not come (lost with a restarting broker) is sent again with
  // its Nats-Msg-Id, which the stream dedupes, until the deadline (README "Fault tolerance").
  NATS_PUBLISH_ACK_TIMEOUT_MS: int(3000, 100),
  NATS_PUBLISH_RETRY_MS: int(15_000, 100),
  SHUTDOWN_TIMEOUT_MS: int(10_000, 100),
  // After how many seconds of a quiet event loop a process gives back the memory start-up or a
  // burst of work grew (one memory-reducing collection per quiet spell; 0 = never). Long enough
  // that a process with work every few seconds never pays the next burst's warm-up again
  // (docs/decisions/0040-compile-cache-and-idle-memory.md).
  MEMORY_IDLE_REDUCE_S: int(30, 0),
});

/** `scheme://host[:port]` and nothing else, as a browser sends it in `Origin`. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

export type ConfigValues = z.infer<typeof ConfigSchema>;
export const CONFIG_KEYS = Object.keys(ConfigSchema.shape) as Array<keyof ConfigValues>;

/**
 * Stream and subject names. A namespace prefixes every name so that tests (and, if wanted,
 * several deployments on one NATS account) never see each other's messages.
 */
export interface BusNames {
  readonly namespace: string;
  readonly streams: { readonly runs: string; readonly tasks: string; readonly events: string };
  readonly consumers: { readonly router: string; readonly billingUsage: string; role(role: string): string };
  runStart(runId: string): string;
  readonly runStartAll: string;
  task(role: string, runId: string): string;
  taskAll(role: string): string;
  readonly taskEverything: string;
  /**
   * The blank files a run's round left, for a writer to remove once the run ended
   * (`BlankFilesTask`); under `task.writer.>`, so it rides the writer's queue and its scaling.
   */
  blankFiles(runId: string): string;
  events(runId: string): string;
  /**
   * Where EVENTS republishes each stored `run.<id>.events` frame with its stream sequence
   * (docs/decisions/0027-per-run-live-subscriptions.md): the gateway's core subscription per run.
   */
  live(runId: string): string;
  /** EVENTS' republish destination for `run.*.events` (a subject mapping). */
  readonly liveMapping: string;
  steps(runId: string): string;
  usage(runId: string): string;
  readonly usageAll: string;
  readonly eventSubjects: readonly string[];
  control(runId: string): string;
  readonly contextCompile: string;
  readonly billingReserve: string;
  readonly billingSettle: string;
  readonly billingBalance: string;
  readonly billingGrant: string;
  readonly routerRunOpen: string;
  readonly routerRunEnd: string;
  readonly routerSessionReviewed: string;
  /**
   * A revoked API key, broadcast by the gateway that revoked it to every gateway, each of which
   * forgets the key it remembered (services/gateway/src/credential-cache.ts).
   */
  readonly apiKeyRevoked: string;
  health(service: string): string;
}

const NAMESPACE_PATTERN = /^[a-z0-9_]{0,32}$/;

export function busNames(namespace = ''): BusNames {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new Error(`bus namespace must match ${NAMESPACE_PATTERN}: ${namespace}`);
  }
  const s = namespace ? `${namespace}.` : '';
  const stream = (name: string) => (namespace ? `${namespace.toUpperCase()}_${name}` : name);
  const consumer = (name: string) => (namespace ? `${namespace}_${name}` : name);
  return {
    namespace,
    streams: { runs: stream('RUNS'), tasks: stream('TASKS'), events: stream('EVENTS') },
    consumers: {
      router: consumer('router'),
      billingUsage: consumer('billing_usage'),
      role: (role) => consumer(`role_${role}`),
    },
    // DESIGN says run.start.<runId>, but that collides with EVENTS' run.*.events (run.start.events
    // matches both) and JetStream refuses overlapping streams, so the work queue lives under runs.start.
    runStart: (runId) => `${s}runs.start.${runId}`,
    runStartAll: `${s}runs.start.*`,
    task: (role, runId) => `${s}task.${role}.${runId}`,
    taskAll: (role) => `${s}task.${role}.>`,
    taskEverything: `${s}task.>`,
    blankFiles: (runId) => `${s}task.writer.${runId}.blank_files`,
    events: (runId) => `${s}run.${runId}.events`,
    live: (runId) => `${s}run.${runId}.live`,
    liveMapping: `${s}run.{{wildcard(1)}}.live`,
    steps: (runId) => `${s}run.${runId}.steps`,
    usage: (runId) => `${s}run.${runId}.usage`,
    usageAll: `${s}run.*.usage`,
    eventSubjects: [`${s}run.*.events`, `${s}run.*.steps`, `${s}run.*.usage`],
    control: (runId) => `${s}run.${runId}.control`,
    contextCompile: `${s}context.compile`,
    billingReserve: `${s}billing.reserve`,
    billingSettle: `${s}billing.settle`,
    billingBalance: `${s}billing.balance`,
    billingGrant: `${s}billing.grant`,
    routerRunOpen: `${s}router.runs.open`,
    routerRunEnd: `${s}router.runs.end`,
    routerSessionReviewed: `${s}router.sessions.reviewed`,
    apiKeyRevoked: `${s}gateway.api_keys.revoked`,
    health: (service) => `${s}health.${service}`,
  };
}

/**
 * A run's step records (two a step, within the collaboration cap) and usage reports (one a model
 * call) are a handful: readers take up to this many one direct get each, and a longer subject
 * with a consumer (`readStored`'s `few`, docs/decisions/0041-broker-work-per-launch.md).
 */
export const RUN_RECORDS_READ_ONE_BY_ONE = 16;

/** Message ids that make retried publishes idempotent (JetStream duplicate window). */
export const msgIds = {
  runStart: (runId: string) => `${runId}:start`,
  runStarted: (runId: string) => `${runId}:run_started`,
  terminal: (runId: string) => `${runId}:terminal`,
  done: (runId: string) => `${runId}:done`,
  refund: (runId: string) => `${runId}:quota_refunded`,
  task: (runId: string, step: number) => `${runId}:step:${step}:task`,
  dispatched: (runId: string, step: number) => `${runId}:step:${step}:dispatched`,
  stepResult: (runId: string, step: number) => `${runId}:step:${step}:result`,
  /**
   * The ids of a step attempt's streamed frames, by their index in the step: the step's part is
   * made once (a worker names every frame it streams), see `framePrefix`.
   */
  frameIds: (runId: string, step: number, attempt: number): ((index: number) => string) => {
    const prefix = framePrefix(runId, step, attempt);
    return (index) => `${prefix}${index}`;
  },
  frame: (runId: string, step: number, attempt: number, index: number) =>
    msgIds.frameIds(runId, step, attempt)(index),
  usage: (runId: string, callIndex: number, attempt: number) => `${runId}:usage:${callIndex}:${attempt}`,
  // Frames the router publishes between steps: a takeover republishes them with
  // the same ids, so the author sees each once.
  routing: (runId: string) => `${runId}:routing`,
  heldText: (runId: string, step: number) => `${runId}:step:${step}:held_text`,
  handoff: (runId: string, step: number) => `${runId}:step:${step}:handoff`,
  clarification: (runId: string) => `${runId}:clarification`,
  readOnlyBlocked: (runId: string) => `${runId}:read_only_handoff_blocked`,
  blankFiles: (runId: string) => `${runId}:blank_files`,
};

/**
 * The step part of a streamed frame's id (`msgIds.frameIds`). JetStream keeps every id of EVENTS
 * for its duplicate window (20 min), one entry per streamed frame, so these ids are short: a UUID
 * run id as its 16 bytes in base64url (22 characters), then `.step.attempt.`. Every other kind of id has a `:`
 * right after the run id and these none (base64url has no `:`), so no frame id equals another
 * kind's. A run id that is not a UUID keeps its text, then `:.`, which no other kind has.
 * docs/operations.md "External services in production" has what the window holds.
 */
function framePrefix(runId: string, step: number, attempt: number): string {
  return `${compactUuid(runId)}.${step}.${attempt}.`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function compactUuid(id: string): string {
  if (!UUID.test(id)) return `${id}:`;
  const hex = id.replaceAll('-', '');
  let out = '';
  // 32 hex digits = 128 bits: 21 groups of 6 bits (126) and the last 2 bits.
  let bits = 0;
  let value = 0;
  for (const digit of hex) {
    value = (value << 4) | Number.parseInt(digit, 16);
    bits += 4;
    while (bits >= 6) {
      bits -= 6;
      out += BASE64URL[(value >> bits) & 63];
    }
    value &= (1 << bits) - 1;
  }
  return bits > 0 ? out + BASE64URL[(value << (6 - bits)) & 63] : out;
}

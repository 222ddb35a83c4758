import type { ConfigValues } from './schema.ts';

/**
 * Settings that follow from others, computed once by `loadConfig` so every service derives them
 * the same way (the stop flag the gateway sets and the one the router sets live equally long) and
 * `main.ts` files only pass values on. Durations are in the unit their name ends with.
 */
export interface DerivedSettings {
  /** AGENT_RUN_WALL_CLOCK_TIMEOUT_S: when the router ends a run that is still going. */
  readonly runWallClockMs: number;
  /** A stop flag must outlive any step of the run it stops: the wall clock plus a minute. */
  readonly stopFlagTtlMs: number;
  /** AGENT_STOP_GRACE_S: how long the router waits for a stopped step to report. */
  readonly stopGraceMs: number;
  /**
   * Past the wall clock, how long a gateway waits before it ends a stream no router finished
   * (the stop grace plus 30 s, so the router's own terminal comes first; docs/architecture.md).
   */
  readonly gatewayFallbackGraceMs: number;
  /**
   * When billing's reconciler ends a stream nobody ended, in seconds since the run started: after
   * the router's wall clock and the gateway's last resort have had their turn (+ 60 s).
   */
  readonly abandonedRunAfterS: number;
  /**
   * How often a router keeps the runs it holds alive: their in-progress acks (RUN_ACK_WAIT_S) and
   * their session locks and user slots (SESSION_LOCK_TTL_MS), three times in the shorter of the two.
   */
  readonly runKeepAliveMs: number;
  /** In-progress acks of the task a worker holds: three per TASK_ACK_WAIT_S, at most one a second. */
  readonly taskHeartbeatMs: number;
  /** How often a router scans for lapsed run leases: three times per lease, at most every 100 ms. */
  readonly routerLeaseScanMs: number;
  /** The run-wide model call counter outlives its run (twice the wall clock) but not by days. */
  readonly modelCallCounterTtlS: number;
  /** The context ledger never exceeds what the model accepts (LLM_MAX_INPUT_TOKENS). */
  readonly promptLedgerCeilingTokens: number;
  /**
   * How long the context service keeps a compile's stored prompt: a redelivered step asks for it
   * only while its run lives, and no run outlives the wall clock and the stop grace (+ 60 s).
   */
  readonly storedPromptRetentionMs: number;
  readonly sseHeartbeatMs: number;
  readonly disconnectGraceMs: number;
  readonly reconcileIntervalMs: number;
  readonly opsReadyGraceMs: number;
  /**
   * What the streams and the router's consumer are created with (`ensureStreams`): EVENTS keeps
   * frames EVENTS_MAX_AGE_S when set (tests), else EVENTS_MAX_AGE_H.
   */
  readonly streams: {
    readonly eventsMaxAgeHours: number;
    readonly runAckWaitSeconds: number;
    readonly runMaxDeliver: number;
    readonly taskAckWaitSeconds: number;
  };
}

export function deriveSettings(values: ConfigValues): DerivedSettings {
  const wallClockS = values.AGENT_RUN_WALL_CLOCK_TIMEOUT_S;
  return Object.freeze({
    runWallClockMs: wallClockS * 1000,
    stopFlagTtlMs: (wallClockS + 60) * 1000,
    stopGraceMs: values.AGENT_STOP_GRACE_S * 1000,
    gatewayFallbackGraceMs: (values.AGENT_STOP_GRACE_S + 30) * 1000,
    abandonedRunAfterS: wallClockS + values.AGENT_STOP_GRACE_S + 60,
    runKeepAliveMs: Math.max(
      100,
      Math.floor(Math.min(values.RUN_ACK_WAIT_S * 1000, values.SESSION_LOCK_TTL_MS) / 3),
    ),
    taskHeartbeatMs: Math.max(1000, (values.TASK_ACK_WAIT_S * 1000) / 3),
    routerLeaseScanMs: Math.max(100, Math.floor(values.ROUTER_RUN_LEASE_TTL_MS / 3)),
    modelCallCounterTtlS: wallClockS * 2,
    promptLedgerCeilingTokens: Math.min(
      values.AGENT_PROMPT_TOKEN_LEDGER_CEILING,
      values.LLM_MAX_INPUT_TOKENS,
    ),
    storedPromptRetentionMs: (wallClockS + values.AGENT_STOP_GRACE_S + 60) * 1000,
    sseHeartbeatMs: values.AGENT_SSE_HEARTBEAT_INTERVAL_S * 1000,
    disconnectGraceMs: values.AGENT_DISCONNECT_GRACE_S * 1000,
    reconcileIntervalMs: values.BILLING_RECONCILE_INTERVAL_S * 1000,
    opsReadyGraceMs: values.OPS_READY_DEPENDENCY_GRACE_S * 1000,
    streams: Object.freeze({
      eventsMaxAgeHours: values.EVENTS_MAX_AGE_S ? values.EVENTS_MAX_AGE_S / 3600 : values.EVENTS_MAX_AGE_H,
      runAckWaitSeconds: values.RUN_ACK_WAIT_S,
      runMaxDeliver: values.RUN_MAX_DELIVER,
      taskAckWaitSeconds: values.TASK_ACK_WAIT_S,
    }),
  });
}

import { describe, expect, it } from 'vitest';
import { deriveSettings } from '../src/derived.ts';
import { loadConfig } from '../src/index.ts';

/** Loads without touching process.env or a real .env file. */
const load = (env: Record<string, string> = {}) => loadConfig({ env, dotenv: {} });

describe('derived settings', () => {
  it('follow the defaults', () => {
    // Wall clock 780 s, stop grace 10 s, ack waits 30 s, lease 3 s, ledger 160k vs model 128k.
    expect(load().derived).toEqual({
      runWallClockMs: 780_000,
      stopFlagTtlMs: 840_000,
      stopGraceMs: 10_000,
      gatewayFallbackGraceMs: 40_000,
      abandonedRunAfterS: 850,
      runKeepAliveMs: 10_000,
      taskHeartbeatMs: 10_000,
      routerLeaseScanMs: 1000,
      modelCallCounterTtlS: 1560,
      promptLedgerCeilingTokens: 128_000,
      storedPromptRetentionMs: 850_000,
      sseHeartbeatMs: 15_000,
      disconnectGraceMs: 30_000,
      reconcileIntervalMs: 30_000,
      opsReadyGraceMs: load().OPS_READY_DEPENDENCY_GRACE_S * 1000,
      streams: { eventsMaxAgeHours: 24, runAckWaitSeconds: 30, runMaxDeliver: 5, taskAckWaitSeconds: 30 },
    });
  });

  it('create the streams with EVENTS_MAX_AGE_S in hours when it is set, EVENTS_MAX_AGE_H otherwise', () => {
    expect(load({ EVENTS_MAX_AGE_H: '2' }).derived.streams.eventsMaxAgeHours).toBe(2);
    expect(load({ EVENTS_MAX_AGE_H: '2', EVENTS_MAX_AGE_S: '90' }).derived.streams.eventsMaxAgeHours).toBe(
      0.025,
    );
    expect(load({ RUN_MAX_DELIVER: '7', TASK_ACK_WAIT_S: '45' }).derived.streams).toMatchObject({
      runMaxDeliver: 7,
      taskAckWaitSeconds: 45,
    });
  });

  it('follow the settings they come from', () => {
    const { derived } = load({
      AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '100',
      AGENT_STOP_GRACE_S: '5',
      RUN_ACK_WAIT_S: '12',
      TASK_ACK_WAIT_S: '9',
      ROUTER_RUN_LEASE_TTL_MS: '1000',
      AGENT_PROMPT_TOKEN_LEDGER_CEILING: '50000',
      BILLING_RECONCILE_INTERVAL_S: '7',
    });
    expect(derived).toMatchObject({
      runWallClockMs: 100_000,
      stopFlagTtlMs: 160_000,
      stopGraceMs: 5000,
      gatewayFallbackGraceMs: 35_000,
      abandonedRunAfterS: 165,
      runKeepAliveMs: 4000,
      taskHeartbeatMs: 3000,
      routerLeaseScanMs: 333,
      modelCallCounterTtlS: 200,
      promptLedgerCeilingTokens: 50_000,
      storedPromptRetentionMs: 165_000,
      reconcileIntervalMs: 7000,
    });
  });

  it('keep a run alive three times in the shorter of its ack wait and its session lock', () => {
    expect(load({ RUN_ACK_WAIT_S: '120' }).derived.runKeepAliveMs).toBe(10_000);
    expect(load({ RUN_ACK_WAIT_S: '120', SESSION_LOCK_TTL_MS: '90000' }).derived.runKeepAliveMs).toBe(30_000);
    expect(load({ RUN_ACK_WAIT_S: '6', SESSION_LOCK_TTL_MS: '90000' }).derived.runKeepAliveMs).toBe(2000);
  });

  it('keep their floors: a task’s in-progress ack at most once a second, one lease scan per 100 ms', () => {
    const { derived } = load({ RUN_ACK_WAIT_S: '1', TASK_ACK_WAIT_S: '2', ROUTER_RUN_LEASE_TTL_MS: '300' });
    // A run's keep-alive goes down to 100 ms: it must come inside the one-second ack wait.
    expect(derived.runKeepAliveMs).toBe(333);
    expect(derived.taskHeartbeatMs).toBe(1000);
    expect(derived.routerLeaseScanMs).toBe(100);
  });

  it('the gateway last resort comes after the router wall clock and stop grace, the reconciler after both', () => {
    const envs: Record<string, string>[] = [
      {},
      { AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '30', AGENT_STOP_GRACE_S: '1' },
    ];
    for (const env of envs) {
      const { derived } = load(env);
      const gatewayEndsAtMs = derived.runWallClockMs + derived.gatewayFallbackGraceMs;
      expect(gatewayEndsAtMs).toBeGreaterThan(derived.runWallClockMs + derived.stopGraceMs);
      expect(derived.abandonedRunAfterS * 1000).toBeGreaterThan(gatewayEndsAtMs);
      expect(derived.stopFlagTtlMs).toBeGreaterThan(derived.runWallClockMs);
    }
  });

  it('are computed once and frozen', () => {
    const config = load();
    expect(Object.isFrozen(config.derived)).toBe(true);
    expect(config.derived).toEqual(deriveSettings(config));
  });
});

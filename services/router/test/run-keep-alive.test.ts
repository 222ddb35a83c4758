import { Writable } from 'node:stream';
import { acquireSemaphore, acquireSessionLock, createRedis, redisKeys } from '@quill/redis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createRunKeepAlive, type KeptRun, type RunKeepAlive } from '../src/run-keep-alive.ts';

const redis = createRedis(testUrls.redis);
const keys = redisKeys(uniqueName('quill_test_'));
const warnings: Array<{ msg: string; run_id?: string }> = [];
const logger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _encoding, done) {
      warnings.push(JSON.parse(String(chunk)));
      done();
    },
  }),
);
let keepAlive: RunKeepAlive;
/** Short enough that the tests see several ticks; a lock of 60 s is extended past its 5 s. */
const TTL_MS = 60_000;

beforeAll(() => {
  keepAlive = createRunKeepAlive({ redis, keys, logger }, { intervalMs: 100, ttlMs: TTL_MS });
});
afterAll(async () => {
  keepAlive.stop();
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length) await redis.del(...found);
  await redis.quit();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls until `check` holds; the bound is far above any machine's pause, not a timing claim. */
async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (const started = Date.now(); !(await check()); await sleep(25)) {
    if (Date.now() - started > 30_000) throw new Error(`never: ${what}`);
  }
}

/** A run as the launch leaves it: the session's lock and one user slot, both for 5 s. */
async function launched(runId: string, userId = 'u-1'): Promise<KeptRun & { acks: number }> {
  const sessionId = `s-${runId}`;
  expect(await acquireSessionLock(redis, keys.sessionLock(sessionId), runId, 5_000)).toBe(true);
  expect(await acquireSemaphore(redis, keys.userSemaphore(userId), runId, 100, 5_000)).toBe(true);
  const run = {
    runId,
    sessionId,
    userId,
    acks: 0,
    working: () => {
      run.acks++;
    },
    log: logger.child({ run_id: runId }),
  };
  return run;
}
const lockTtl = (run: KeptRun) => redis.pttl(keys.sessionLock(run.sessionId));
const slotExpiry = async (run: KeptRun) =>
  Number(await redis.zscore(keys.userSemaphore(run.userId), run.runId));

describe('router run keep-alive', () => {
  it('sends every kept run’s in-progress ack and renews its lock and slot, until it is let go', async () => {
    const runs = await Promise.all(['run-a', 'run-b'].map((id) => launched(id)));
    const stops = runs.map((run) => keepAlive.keep(run));
    await eventually(async () => {
      const ttls = await Promise.all(runs.map(lockTtl));
      return runs.every((run) => run.acks >= 2) && ttls.every((ttl) => ttl > 5_000);
    }, 'both runs kept alive');
    expect(await slotExpiry(runs[0]!)).toBeGreaterThan(Date.now() + 30_000);

    stops[0]!();
    const acksWhenLetGo = runs[0]!.acks;
    const acksOfOther = runs[1]!.acks;
    await eventually(() => runs[1]!.acks >= acksOfOther + 2, 'the other run is still kept');
    expect(runs[0]!.acks).toBe(acksWhenLetGo);
    stops[1]!();
  });

  it('says once that a run’s lock lapsed, and keeps the others going', async () => {
    const lapsed = await launched('run-lapsed', 'u-2');
    const fine = await launched('run-fine', 'u-2');
    // The lock expired and the next launch of the session took it.
    await redis.set(keys.sessionLock(lapsed.sessionId), 'run-next', 'PX', 5_000);
    const stops = [keepAlive.keep(lapsed), keepAlive.keep(fine)];
    await eventually(async () => lapsed.acks >= 3 && (await lockTtl(fine)) > 5_000, 'three ticks');

    const said = warnings.filter((entry) => entry.run_id === 'run-lapsed');
    expect(said.map((entry) => entry.msg)).toEqual([
      'session lock or user slot had lapsed while the run was held',
    ]);
    expect(warnings.some((entry) => entry.run_id === 'run-fine')).toBe(false);
    expect(await redis.get(keys.sessionLock(lapsed.sessionId))).toBe('run-next');
    for (const stop of stops) stop();
  });

  it('goes on with the other runs when one in-progress ack cannot be sent', async () => {
    const broken = await launched('run-broken', 'u-3');
    broken.working = () => {
      throw new Error('connection closed');
    };
    const fine = await launched('run-fine-2', 'u-3');
    const stops = [keepAlive.keep(broken), keepAlive.keep(fine)];
    await eventually(async () => fine.acks >= 2 && (await lockTtl(broken)) > 5_000, 'renewed regardless');
    expect(
      warnings.some((entry) => entry.run_id === 'run-broken' && entry.msg === 'in-progress ack not sent'),
    ).toBe(true);
    for (const stop of stops) stop();
  });
});

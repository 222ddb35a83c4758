import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/service-process.ts';
import { type Stack, startStack } from '../support/stack.ts';

// A service's start-up memory (docs/decisions/0040-compile-cache-and-idle-memory.md): it starts
// from the compile cache the image fills, so it never strips a type itself, and once quiet it gives
// back what start-up grew.
const cacheDir = mkdtempSync(join(tmpdir(), 'quill-compile-cache-'));

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0, gateway: 0 },
  });
});
afterAll(async () => {
  await stack?.stop();
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Node's own report of each transpile the compile cache answered or missed. */
const COMPILE_CACHE_DEBUG = { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };
const transpiles = (output: string) => ({
  hits: output.match(/retrieving transpile cache for StrippedTypeScript \S+\.\.\.success/g)?.length ?? 0,
  misses: output.match(/no transpile cache for StrippedTypeScript \S+/g) ?? [],
});

describe('service start-up from the compile cache', () => {
  it('finds every TypeScript module of a service and its preload in a cache scripts/compile-cache.ts filled', async () => {
    const filled = spawnSync(process.execPath, ['scripts/compile-cache.ts', cacheDir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(filled.status, filled.stderr).toBe(0);
    for (const name of ['writer', 'gateway'] as const) {
      const service = await stack.startService(name, {
        ...COMPILE_CACHE_DEBUG,
        NODE_COMPILE_CACHE: cacheDir,
      });
      const { hits, misses } = transpiles(service.output());
      expect(misses, name).toEqual([]);
      // The entry point and its preload among them: loaded as ES modules, keyed by URL.
      expect(hits, name).toBeGreaterThan(100);
      expect(service.output(), name).toMatch(
        /retrieving transpile cache for StrippedTypeScript file:\S+\/main\.ts/,
      );
      expect(service.output(), name).toMatch(
        /retrieving transpile cache for StrippedTypeScript file:\S+\/register\.ts/,
      );
    }
  });

  it('strips every module itself when the cache is empty (what the check above would see without it)', async () => {
    const emptyDir = mkdtempSync(join(tmpdir(), 'quill-compile-cache-empty-'));
    try {
      const service = await stack.startService('billing', {
        ...COMPILE_CACHE_DEBUG,
        NODE_COMPILE_CACHE: emptyDir,
      });
      expect(transpiles(service.output()).misses.length).toBeGreaterThan(100);
    } finally {
      rmSync(emptyDir, { recursive: true, force: true });
    }
  });
});

describe('idle memory', () => {
  it('gives back what start-up grew once the service is quiet, once', async () => {
    const service = await stack.startService('billing', { MEMORY_IDLE_REDUCE_S: '1' });
    const reductions = () =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes('idle: memory given back'))
        .map((line) => JSON.parse(line) as Record<string, number>);
    await expect.poll(() => reductions().length, { timeout: 60_000, interval: 250 }).toBeGreaterThan(0);
    const [first] = reductions();
    expect(first!.heap_after_mb).toBeLessThan(first!.heap_before_mb!);
    expect(first!.rss_after_mb).toBeLessThan(first!.rss_before_mb!);
    // Quiet on, nothing grown: no second collection (the rule's 8 MB of growth).
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(reductions()).toHaveLength(1);
    // And operators see it: one observation of the pause on /metrics.
    const metrics = await (await fetch(`${service.opsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^quill_memory_idle_reduction_pause_seconds_count(\{[^}]*\})? 1$/m);
  });
});

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_STREAM_SETTINGS } from '../../../test/support/test-bus.ts';
import { backoffDelay, isTransientNatsError } from '../src/backoff.ts';
import { connectBus, ensureStreams, retryWithBackoff } from '../src/index.ts';

function recordingLogger() {
  const lines: Array<{ object: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    warn: (object: object, message: string) => lines.push({ object: object as never, message }),
  };
}

describe('retryWithBackoff', () => {
  it('retries a transient failure until it succeeds, logging what it waits for', async () => {
    const logger = recordingLogger();
    let calls = 0;
    const value = await retryWithBackoff(
      async () => {
        if (++calls < 3) throw new Error('request timed out');
        return 'answered';
      },
      { what: 'the thing', logger, initialDelayMs: 1, maxDelayMs: 2 },
    );
    expect(value).toBe('answered');
    expect(calls).toBe(3);
    expect(logger.lines.map((line) => line.message)).toEqual([
      'waiting for the thing',
      'waiting for the thing',
    ]);
    expect(logger.lines[1]!.object).toMatchObject({ attempt: 2, waiting_for: 'the thing' });
  });

  it('throws at once what is not retryable, and the last error once attempts are spent', async () => {
    let calls = 0;
    const refused = new Error('stream config refused');
    await expect(
      retryWithBackoff(
        async () => {
          calls++;
          throw refused;
        },
        { what: 'x', retryable: isTransientNatsError, initialDelayMs: 1 },
      ),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);

    calls = 0;
    await expect(
      retryWithBackoff(
        async () => {
          throw new Error(`timeout ${++calls}`);
        },
        { what: 'x', attempts: 4, initialDelayMs: 1, maxDelayMs: 1 },
      ),
    ).rejects.toThrow('timeout 4');
  });

  it('grows the delay exponentially up to the cap, with jitter in the upper half', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      const ceiling = Math.min(1000, 100 * 2 ** (attempt - 1));
      const delay = backoffDelay(attempt, 100, 1000);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});

describe('connectBus before its server is up', () => {
  let server: ChildProcess | undefined;
  let storeDir: string | undefined;
  afterEach(() => {
    server?.kill('SIGKILL');
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('waits for NATS and JetStream instead of failing, then sets up the streams', async () => {
    const port = await freePort();
    const logger = recordingLogger();
    const connecting = connectBus({
      url: `nats://127.0.0.1:${port}`,
      namespace: 'late',
      name: 'late',
      logger,
    });
    // Start the server only once the bus has failed to connect at least twice.
    while (logger.lines.length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    storeDir = mkdtempSync(join(tmpdir(), 'quill-nats-'));
    server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
      stdio: 'ignore',
    });
    const bus = await connecting;
    try {
      expect(logger.lines[0]!.message).toBe(`waiting for NATS at nats://127.0.0.1:${port}`);
      await ensureStreams(bus, TEST_STREAM_SETTINGS);
      expect((await bus.jsm.streams.info(bus.names.streams.runs)).config.name).toBe(bus.names.streams.runs);
    } finally {
      await bus.close();
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from '../../../test/support/otlp-receiver.ts';
import { childProcessEnv, testUrls } from '../../../test/support/urls.ts';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/traced-io.ts', import.meta.url));

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

function serverDatabaseUrl(): string {
  const url = new URL(testUrls.database);
  url.pathname = '/postgres';
  return url.toString();
}

async function runFixture(env: Record<string, string>) {
  // A small explicit environment: the child must not inherit the test runner's NODE_OPTIONS.
  const child = spawn(process.execPath, ['--import', '@quill/telemetry/register', fixture], {
    cwd: repositoryRoot,
    env: childProcessEnv({ QUILL_ENV_PRIORITY: 'none', ...env }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code: code as number | null, stdout, stderr };
}

describe('node --import @quill/telemetry/register', () => {
  it('exports pg, redis and fetch spans of one trace over OTLP/HTTP JSON', async () => {
    const result = await runFixture({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'telemetry-fixture',
      // The server's own database: the one DATABASE_URL names need not exist on a fresh machine.
      DATABASE_URL: serverDatabaseUrl(),
      REDIS_URL: testUrls.redis,
    });
    expect(result, result.stderr).toMatchObject({ code: 0 });

    const inRootTrace = (spans: ReceivedSpan[]) => {
      const root = spans.find((span) => span.name === 'fixture.root');
      return root ? spans.filter((span) => span.traceId === root.traceId) : [];
    };
    const spans = await receiver.waitFor((all) => {
      const scopes = new Set(inRootTrace(all).map((span) => span.scope));
      return ['pg', 'ioredis', 'undici', 'instrumentation-http'].every((name) =>
        [...scopes].some((scope) => scope.endsWith(name)),
      );
    });
    const trace = inRootTrace(spans);
    const root = trace.find((span) => span.name === 'fixture.root')!;
    expect(root.parentSpanId).toBe('');
    expect(root.serviceName).toBe('telemetry-fixture');

    const pgQuery = trace.find((span) => span.scope.endsWith('instrumentation-pg') && span.kind === 'client');
    expect(pgQuery?.attributes['db.system.name'] ?? pgQuery?.attributes['db.system']).toBe('postgresql');
    const redisCommand = trace.find(
      (span) => span.scope.endsWith('instrumentation-ioredis') && span.name === 'ping',
    );
    expect(redisCommand?.kind).toBe('client');
    const fetchSpan = trace.find((span) => span.scope.endsWith('instrumentation-undici'));
    expect(fetchSpan?.kind).toBe('client');
    expect(fetchSpan?.parentSpanId).toBe(root.spanId);
    // The fixture's own HTTP server continues the fetch's trace: propagation over HTTP works too.
    const serverSpan = trace.find(
      (span) => span.scope.endsWith('instrumentation-http') && span.kind === 'server',
    );
    expect(serverSpan?.parentSpanId).toBe(fetchSpan?.spanId);

    const logLine = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(logLine).toMatchObject({
      msg: 'fixture done',
      trace_id: root.traceId,
      service: 'telemetry-fixture',
    });
  });

  it('sends OTLP/HTTP protobuf when OTEL_EXPORTER_OTLP_PROTOCOL is unset (the spec default)', async () => {
    receiver.clear();
    const before = receiver.traceContentTypes().length;
    const result = await runFixture({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_SERVICE_NAME: 'telemetry-fixture-proto',
      DATABASE_URL: serverDatabaseUrl(),
      REDIS_URL: testUrls.redis,
    });
    expect(result, result.stderr).toMatchObject({ code: 0 });
    const sent = receiver.traceContentTypes().slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((type) => type === 'application/x-protobuf')).toBe(true);
  });
});

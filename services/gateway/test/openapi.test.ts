import type { Bus } from '@quill/bus';
import { API_ROUTES, openApiPath } from '@quill/contracts';
import { createPool } from '@quill/db';
import { createRedis, type RedisClient, redisKeys } from '@quill/redis';
import { createLogger } from '@quill/telemetry';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls } from '../../../test/support/urls.ts';
import { buildGatewayApp } from '../src/app.ts';
import { createRunFeeds } from '../src/run-feed.ts';

let bus: Bus;
let pool: Pool;
let redis: RedisClient;
let app: FastifyInstance;
let base: string;

// The gateway as main.ts builds it, on the real NATS / Redis / Postgres, served over HTTP.
beforeAll(async () => {
  bus = await openTestBus('o', 'openapi-test');
  pool = createPool(testUrls.database, { max: 1 });
  redis = createRedis(testUrls.redis);
  app = await buildGatewayApp({
    bus,
    pool,
    redis,
    keys: redisKeys(`${bus.names.streams.events}:`),
    logger: createLogger({ service: 'gateway', level: 'silent', instanceId: 'openapi-test' }),
    instanceId: 'openapi-test',
    configConflicts: [],
    runFeeds: createRunFeeds(bus),
    settings: {
      bodyLimitBytes: 1_048_576,
      trustProxy: false,
      heartbeatMs: 15_000,
      sessionLockTtlMs: 30_000,
      requestTimeoutMs: 10_000,
      requestDeadlineMs: 30_000,
      wallClockMs: 780_000,
      fallbackGraceMs: 40_000,
      disconnectGraceMs: 30_000,
      stopFlagTtlMs: 840_000,
      steerQueueMax: 20,
      userMaxConcurrentRuns: 2,
      rateLimitPerMinute: 30,
      authCacheTtlMs: 10_000,
      jwtSecret: 'openapi-test-secret-0123456789',
      jwtTtlSeconds: 900,
      corsOrigins: [],
      defaultCredits: 100,
      projectRestoreDays: 30,
    },
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
  await pool?.end();
  redis?.disconnect();
  await closeTestBus(bus);
});

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
}

describe('GET /api/v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document listing every route the gateway serves, and nothing else', async () => {
    const response = await fetch(`${base}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as OpenApiDocument;
    expect(document.openapi).toBe('3.1.0');
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // HEAD is Fastify's automatic twin of each GET; OPTIONS is the CORS preflight.
    const served = app
      .registeredRoutes()
      .filter((route) => route.method !== 'HEAD' && route.method !== 'OPTIONS')
      .map((route) => `${route.method} ${openApiPath(route.url.replace(/^\/api\/v1/, ''))}`);
    expect(served.length).toBeGreaterThan(20);
    expect([...new Set(served)].sort()).toEqual([...documented].sort());
    expect(documented).toHaveLength(API_ROUTES.length);
    const operationIds = Object.values(document.paths).flatMap((operations) =>
      Object.values(operations).map((operation) => operation.operationId),
    );
    expect(new Set(operationIds).size).toBe(operationIds.length);
    for (const operations of Object.values(document.paths)) {
      for (const operation of Object.values(operations))
        expect(operation.responses).toHaveProperty('default');
    }
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const document = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // The validator does catch a broken document.
    const broken = { ...document, paths: { '/x': { get: { responses: 'none' } } } };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });
});

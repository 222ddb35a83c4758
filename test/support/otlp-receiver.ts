import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export type ReceivedSpanKind = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty string for a root span. */
  parentSpanId: string;
  name: string;
  kind: ReceivedSpanKind;
  serviceName: string;
  /** The instrumentation scope, e.g. `@opentelemetry/instrumentation-pg`. */
  scope: string;
  attributes: Record<string, unknown>;
  /** The service's resource attributes (`OTEL_RESOURCE_ATTRIBUTES` merged in). */
  resource: Record<string, unknown>;
  status: { code: 'unset' | 'ok' | 'error'; message: string };
  /** Span links: other traces this span belongs to (a stop request → its run). */
  links: Array<{ traceId: string; spanId: string }>;
  /** Start and end in epoch milliseconds (sub-millisecond precision kept). */
  startMs: number;
  endMs: number;
}

export interface OtlpReceiver {
  /** Base URL to use as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** The content type of every trace post, to see which OTLP encoding an exporter used. */
  traceContentTypes(): string[];
  /** Resolves with all spans once `predicate` holds for them; rejects after `timeoutMs`. */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  clear(): void;
  close(): Promise<void>;
}

// OTLP's enum starts at UNSPECIFIED = 0, one ahead of @opentelemetry/api's SpanKind.
const KINDS: readonly ReceivedSpanKind[] = [
  'unspecified',
  'internal',
  'server',
  'client',
  'producer',
  'consumer',
];

/**
 * An OTLP/HTTP receiver for tests: JSON encoding only (the exporter in @quill/telemetry sends JSON).
 * Metrics and logs posts are accepted and dropped so a stray exporter cannot fail a test.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const waiters = new Set<() => void>();

  const server = createServer((request, response) => {
    handle(request, response, received, contentTypes).then(
      () => {
        for (const check of waiters) check();
      },
      (error: unknown) => {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: String(error) }));
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    traceContentTypes: () => [...contentTypes],
    clear: () => {
      received.length = 0;
    },
    waitFor: (predicate, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate([...received])) return;
          cleanup();
          resolve([...received]);
        };
        const timer = setTimeout(() => {
          cleanup();
          const names = received.map((span) => `${span.serviceName}:${span.name}`).join(', ');
          reject(new Error(`OTLP receiver: condition not met in ${timeoutMs} ms; got [${names}]`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  received: ReceivedSpan[],
  contentTypes: string[],
) {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  let body = Buffer.concat(chunks);
  if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);

  if (request.method === 'POST' && request.url === '/v1/traces') {
    contentTypes.push(request.headers['content-type'] ?? '');
    if (!request.headers['content-type']?.includes('application/json')) {
      response.writeHead(415, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: 'only OTLP/HTTP JSON is supported' }));
      return;
    }
    received.push(...parseTraces(JSON.parse(body.toString('utf8'))));
  }
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end('{}');
}

interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
  bytesValue?: string;
}
interface OtlpTracesRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: OtlpKeyValue[];
        status?: { code?: number; message?: string };
        links?: Array<{ traceId: string; spanId: string }>;
        startTimeUnixNano?: string | number;
        endTimeUnixNano?: string | number;
      }>;
    }>;
  }>;
}

function parseTraces(request: OtlpTracesRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = toRecord(resourceSpans.resource?.attributes);
    const serviceName = typeof resource['service.name'] === 'string' ? resource['service.name'] : '';
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: KINDS[span.kind ?? 0] ?? 'unspecified',
          serviceName,
          scope: scopeSpans.scope?.name ?? '',
          attributes: toRecord(span.attributes),
          resource,
          status: {
            code: STATUS_CODES[span.status?.code ?? 0] ?? 'unset',
            message: span.status?.message ?? '',
          },
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
          startMs: nanosToMs(span.startTimeUnixNano),
          endMs: nanosToMs(span.endTimeUnixNano),
        });
      }
    }
  }
  return spans;
}

const STATUS_CODES = ['unset', 'ok', 'error'] as const;

/** int64 nanoseconds arrive as a JSON string; BigInt keeps them exact before scaling down. */
function nanosToMs(value: string | number | undefined): number {
  if (value === undefined) return Number.NaN;
  const nanos = BigInt(value);
  return Number(nanos / 1000n) / 1000;
}

function toRecord(attributes: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((attributes ?? []).map((entry) => [entry.key, toValue(entry.value)]));
}

function toValue(value: OtlpAnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  // int64 may arrive as a JSON string (protobuf JSON mapping) or as a number (OTel JS).
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(toValue);
  if (value.kvlistValue) return toRecord(value.kvlistValue.values);
  return value.bytesValue;
}

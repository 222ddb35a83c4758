import { type ApiRoute, type HttpMethod, StreamQuery } from '@quill/contracts';
import fc from 'fast-check';
import { z } from 'zod';

/** A request as the fuzzer sends it: everything a client controls. */
export interface FuzzRequest {
  method: string;
  /** Path under `/api/v1`, already encoded (or deliberately not). */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** What the fuzzer may use as real values, so that some requests get past the first check. */
export interface FuzzWorld {
  projectId: string;
  fileId: string;
  runId: string;
  sessionId: string;
  userId: string;
  skillName: string;
  /** Bearer credentials: the owner's key, a viewer's, an admin's. */
  keys: string[];
}

type JsonSchema = {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
};

const EVIL_KEYS = [
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__proto__',
  '__defineGetter__',
  'isPrototypeOf',
];

/** Strings that broke or could break something on the way to Postgres or the client. */
const nastyString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x\udfffy',
    '\ud83d\ude00',
    '雨'.repeat(30),
    'x'.repeat(5000),
    '%00',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "'; DROP TABLE users; --",
    '\u202e\u2066',
    'all',
    'private_to:writer',
  ),
);
const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 64, 1e308, -0, 0.5),
);
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(nastyString, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom(...EVIL_KEYS, 'a'), nastyString, { maxKeys: 2 }),
);

function valueFor(schema: JsonSchema, world: FuzzWorld): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (type === 'string' && schema.format === 'uuid') {
    return fc.oneof(
      fc.constantFrom(world.projectId, world.fileId, world.runId, world.sessionId, world.userId),
      fc.uuid(),
      nastyString,
    );
  }
  if (type === 'string') return fc.oneof(fc.string({ maxLength: 30 }), nastyString);
  if (type === 'integer' || type === 'number') return nastyNumber;
  if (type === 'boolean') return fc.boolean();
  if (type === 'array') return fc.array(valueFor(schema.items ?? {}, world), { maxLength: 3 });
  return nastyValue;
}

/** An object shaped like the schema (some keys, some evil extra ones), values valid or not. */
function shapedBody(schema: JsonSchema, world: FuzzWorld): fc.Arbitrary<string> {
  const properties = Object.entries(schema.properties ?? {});
  const entries = fc.tuple(
    ...properties.map(([key, property]) =>
      fc
        .option(fc.oneof({ weight: 3, arbitrary: valueFor(property, world) }, nastyValue), { freq: 4 })
        .map((value) => [key, value] as const),
    ),
  );
  const extras = fc.array(fc.tuple(fc.constantFrom(...EVIL_KEYS, 'extra'), nastyValue), { maxLength: 2 });
  return fc.tuple(entries, extras).map(([picked, extra]) => {
    const kept = picked.filter(([, value]) => value !== null);
    // fromEntries defines own properties, so `__proto__` is sent as a key like any other.
    return JSON.stringify(Object.fromEntries([...kept, ...extra]));
  });
}

const rawBodies = fc.oneof(
  fc.constantFrom(
    '{',
    '{"a":',
    '[]',
    'null',
    '1e999',
    '"\\u0000"',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

function segmentFor(name: string, world: FuzzWorld): fc.Arbitrary<string> {
  const real: Record<string, string> = {
    projectId: world.projectId,
    fileId: world.fileId,
    runId: world.runId,
    sessionId: world.sessionId,
    userId: world.userId,
    name: world.skillName,
  };
  const nastySegment = fc.oneof(
    nastyString.map((value) => encodeURIComponent(value.toWellFormed())),
    fc.constantFrom(
      '%zz',
      '%E0%A4%A',
      '%00',
      '%ud800',
      '..',
      '%2e%2e',
      'a'.repeat(150),
      '%F0%9F',
      '%C0%AF',
      '__proto__',
    ),
  );
  return fc.oneof(
    { weight: 3, arbitrary: real[name] ? fc.constant(real[name]!) : fc.uuid() },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: nastySegment },
  );
}

function queryFor(route: ApiRoute): fc.Arbitrary<string> {
  if (route.query !== StreamQuery) return fc.constantFrom('', '', '?x=1', '?%zz=%zz');
  return fc.oneof(
    fc.constant(''),
    fc
      .tuple(fc.constantFrom('ticket', 'last_event_id', 'other'), nastyString)
      .map(([key, value]) => `?${key}=${encodeURIComponent(value.toWellFormed())}`),
    fc.constant(`?ticket=${'A'.repeat(43)}`),
  );
}

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'text/plain',
  'application/xml',
  'application/zip',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
);

/** Requests for one route: its path with real or broken parameters, credentials, body. */
export function requestsFor(route: ApiRoute, world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const names = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1]!);
  const path = fc.tuple(...names.map((name) => segmentFor(name, world)), queryFor(route)).map((values) => {
    let filled = route.path;
    names.forEach((name, index) => {
      filled = filled.replace(`:${name}`, values[index]!);
    });
    return filled + values.at(-1)!;
  });
  const auth = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...world.keys).map((key) => `Bearer ${key}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer qk_nope',
        'Bearer eyJhbGciOiJub25lIn0.e30.',
        'Basic Zm9vOmJhcg==',
      ),
    },
  );
  const lastEventId = fc.option(
    fc.constantFrom('0', '1', '-1', 'abc', '1e400', '99999999999999999999', ' ', '\u00b9'),
    {
      freq: 3,
    },
  );
  const body: fc.Arbitrary<{ body?: string | Uint8Array; contentType?: string }> =
    route.body === 'zip'
      ? fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ body: bytes, contentType: 'application/zip' })),
          rawBodies.map((text) => ({ body: text, contentType: 'application/json' })),
        )
      : route.body
        ? fc
            .tuple(
              fc.oneof(
                { weight: 6, arbitrary: shapedBody(jsonSchemaOf(route.body), world) },
                { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
                { weight: 1, arbitrary: rawBodies },
              ),
              contentTypes,
            )
            .map(([text, contentType]) => ({ body: text, contentType }))
        : fc
            .option(rawBodies, { freq: 5 })
            .map((text) => (text === null ? {} : { body: text, contentType: 'application/json' }));
  return fc.tuple(path, auth, lastEventId, body).map(([target, authorization, lastEvent, payload]) => ({
    method: route.method,
    path: target,
    headers: {
      ...(authorization ? { authorization } : {}),
      ...(lastEvent === null ? {} : { 'last-event-id': lastEvent }),
      ...(payload.contentType ? { 'content-type': payload.contentType } : {}),
    },
    ...(payload.body === undefined ? {} : { body: payload.body }),
  }));
}

/** Any method on a known path: what is not served there must be 405, never 404 or 5xx. */
export function wrongMethods(routes: readonly ApiRoute[], world: FuzzWorld): fc.Arbitrary<FuzzRequest> {
  const methods: Array<HttpMethod | 'OPTIONS' | 'HEAD' | 'PROPFIND' | 'TRACE'> = [
    'GET',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'PROPFIND',
  ];
  return fc
    .tuple(fc.constantFrom(...routes), fc.constantFrom(...methods))
    .chain(([route, method]) => requestsFor(route, world).map((request) => ({ ...request, method })));
}

function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

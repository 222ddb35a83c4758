import { z } from 'zod';
import { API_ROUTES, type ApiRoute } from './api-routes.ts';
import { ERROR_CATALOG, ERROR_CODES } from './errors.ts';
import { SSE_PROTOCOL_VERSION } from './frames.ts';
import { ErrorResponse } from './http.ts';

export const API_PREFIX = '/api/v1';

type JsonSchema = Record<string, unknown>;

/** A zod schema as the JSON Schema (2020-12, the dialect of OpenAPI 3.1) of what a client sends. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/** `/projects/:projectId/files` → `/api/v1/projects/{projectId}/files`. */
export function openApiPath(path: string): string {
  return `${API_PREFIX}${path.replace(/:([A-Za-z]+)/g, '{$1}')}`;
}

function operationId(route: ApiRoute): string {
  const words = route.path.split(/[/:.-]+/).filter(Boolean);
  return [route.method.toLowerCase(), ...words.map((word) => word[0]!.toUpperCase() + word.slice(1))].join(
    '',
  );
}

function parameters(route: ApiRoute): JsonSchema[] {
  const from = (schema: z.ZodObject | undefined, where: 'path' | 'query') =>
    Object.entries(schema?.shape ?? {}).map(([name, field]) => ({
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      schema: jsonSchema(field as z.ZodType),
    }));
  const lastEventId =
    route.success.sse && route.method === 'GET'
      ? [
          {
            name: 'last-event-id',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^\\d+$' },
          },
        ]
      : [];
  return [...from(route.params, 'path'), ...from(route.query, 'query'), ...lastEventId];
}

function requestBody(route: ApiRoute): JsonSchema | undefined {
  if (route.body === undefined) return undefined;
  if (route.body === 'zip') {
    return {
      required: true,
      content: { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } } },
    };
  }
  return { required: true, content: { 'application/json': { schema: jsonSchema(route.body) } } };
}

function success(route: ApiRoute): JsonSchema {
  const { status, body, sse, zip, markdown } = route.success;
  const content = sse
    ? {
        'text/event-stream': {
          schema: { type: 'string', description: `SSE frames (protocol ${SSE_PROTOCOL_VERSION})` },
        },
      }
    : zip
      ? { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } } }
      : markdown
        ? { 'text/markdown': { schema: { type: 'string' } } }
        : status === 204
          ? undefined
          : { 'application/json': { schema: body ? jsonSchema(body, 'output') : { type: 'object' } } };
  const responses: JsonSchema = {
    [String(status)]: { description: route.summary, ...(content ? { content } : {}) },
  };
  if (sse && route.method === 'GET') responses['204'] = { description: 'The stream already ended with done' };
  return responses;
}

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table and its zod schemas
 * (the ones the gateway parses requests with), so it cannot drift from what is enforced.
 */
export function buildOpenApiDocument(): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of API_ROUTES) {
    const body = requestBody(route);
    const path = openApiPath(route.path);
    const operations = paths[path] ?? {};
    paths[path] = operations;
    operations[route.method.toLowerCase()] = {
      operationId: operationId(route),
      summary: route.summary,
      security: route.auth ? [{ bearer: [] }] : [],
      parameters: parameters(route),
      ...(body ? { requestBody: body } : {}),
      responses: {
        ...success(route),
        default: {
          description: `An error from the catalog: ${ERROR_CODES.map((code) => `${code} (${ERROR_CATALOG[code].http})`).join(', ')}`,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Quill API', version: '1' },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key (qk_…) or access token' },
      },
      schemas: { ErrorResponse: jsonSchema(ErrorResponse, 'output') },
    },
  };
}

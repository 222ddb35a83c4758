import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { API_ROUTES, buildOpenApiDocument, openApiPath } from '../src/index.ts';

// The README's HTTP API table is the author-facing reference; the route table feeds the OpenAPI
// document and the fuzz test. They must list the same routes.
const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const readmeRoutes = [...readme.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE)` \| `([^`]+)` \|/gm)].map(
  (match) => `${match[1]} ${match[2]}`,
);

describe('API_ROUTES', () => {
  it('lists exactly the routes of the README table, each once', () => {
    const routes = API_ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(new Set(routes).size).toBe(routes.length);
    expect([...routes].sort()).toEqual([...readmeRoutes].sort());
  });

  it('names every path parameter in its params schema, and only those', () => {
    for (const route of API_ROUTES) {
      const inPath = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1]);
      expect(Object.keys(route.params?.shape ?? {}).sort(), route.path).toEqual(inPath.sort());
    }
  });

  it('turns every schema into JSON Schema for the OpenAPI document', () => {
    const document = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    for (const route of API_ROUTES) {
      expect(document.paths[openApiPath(route.path)]?.[route.method.toLowerCase()], route.path).toBeDefined();
      if (route.body && route.body !== 'zip')
        expect(() => z.toJSONSchema(route.body as z.ZodType)).not.toThrow();
    }
  });
});

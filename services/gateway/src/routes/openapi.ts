import { buildOpenApiDocument } from '@quill/contracts';
import type { FastifyInstance } from 'fastify';

/** `GET /openapi.json`: the API's OpenAPI 3.1 document, built once from the zod route table. */
export function registerOpenApiRoute(app: FastifyInstance): void {
  const document = buildOpenApiDocument();
  app.get('/openapi.json', async () => document);
}

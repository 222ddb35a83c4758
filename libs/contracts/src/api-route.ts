import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One route of the HTTP API under `/api/v1`, with the schemas the gateway parses it with. */
export interface ApiRoute {
  readonly method: HttpMethod;
  /** Fastify syntax (`:param`), relative to `/api/v1`. */
  readonly path: string;
  readonly summary: string;
  /** false: no bearer needed (health, token exchange, the OpenAPI document). */
  readonly auth: boolean;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  /** A JSON body's schema, or `zip` for the raw skill package. */
  readonly body?: z.ZodType | 'zip';
  /** The success status and, when it is JSON with a schema here, its body. */
  readonly success: {
    readonly status: number;
    readonly body?: z.ZodType;
    readonly sse?: true;
    readonly zip?: true;
    readonly markdown?: true;
  };
}

export const ok = (body?: z.ZodType) => ({ status: 200, ...(body ? { body } : {}) });
export const route = (
  method: HttpMethod,
  path: string,
  summary: string,
  options: Omit<ApiRoute, 'method' | 'path' | 'summary' | 'auth' | 'success'> & {
    auth?: boolean;
    success?: ApiRoute['success'];
  } = {},
): ApiRoute => ({
  method,
  path,
  summary,
  auth: options.auth ?? true,
  success: options.success ?? ok(),
  ...options,
});

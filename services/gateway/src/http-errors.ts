import { ERROR_CATALOG, type ErrorCode, errorBody, QuillError } from '@quill/contracts';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';

/** Parses a body/params/query with zod; failures become 400 naming each offending field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const fields: Record<string, string[]> = {};
  for (const issue of parsed.error.issues) {
    const key =
      issue.path.join('.') || (issue.code === 'unrecognized_keys' ? issue.keys.join(',') : '(body)');
    fields[key] = [...(fields[key] ?? []), issue.message];
  }
  throw new QuillError('invalid_request', { details: { fields } });
}

export function sendError(reply: FastifyReply, code: ErrorCode, fields?: Record<string, string[]>) {
  return reply.code(ERROR_CATALOG[code].http).send(errorBody(code, fields));
}

/**
 * The edge hides internals (STYLE 2): a client gets a catalog code and its fixed message; the
 * cause goes to the log with the request and trace ids.
 */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | QuillError, request, reply) => {
    if (error instanceof QuillError) {
      if (error.spec.http >= 500)
        request.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
      const fields = error.details?.fields as Record<string, string[]> | undefined;
      return sendError(reply, error.code, fields);
    }
    const fastifyCode = (error as FastifyError).code;
    if (fastifyCode === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 'payload_too_large');
    if (fastifyCode === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || fastifyCode === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return sendError(reply, 'invalid_request', { '(body)': ['expected a JSON body'] });
    }
    if ((error as FastifyError).statusCode === 400) {
      return sendError(reply, 'invalid_request', { '(body)': ['malformed JSON'] });
    }
    if ((error as FastifyError).statusCode === 429) return sendError(reply, 'rate_limited');
    request.log.error({ err: error }, 'unhandled request error');
    return sendError(reply, 'internal_error');
  });
  app.setNotFoundHandler((_request, reply) => sendError(reply, 'not_found'));
}

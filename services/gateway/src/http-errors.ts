import { ERROR_CATALOG, type ErrorCode, errorBody, QuillError } from '@quill/contracts';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { MethodIndex } from './method-index.ts';
import { requestLanguage } from './request-language.ts';

/** Parses a body/params/query with zod; failures become 400 naming each offending field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  // A Map, not an object literal: a field may be called `constructor`, `toString` or `__proto__`.
  const fields = new Map<string, string[]>();
  for (const issue of parsed.error.issues) {
    const key =
      issue.path.map(String).join('.') ||
      (issue.code === 'unrecognized_keys' ? issue.keys.join(',') : '(body)');
    fields.set(key, [...(fields.get(key) ?? []), issue.message]);
  }
  // Object.fromEntries defines own properties, so even `__proto__` stays a plain field name.
  throw new QuillError('invalid_request', { details: { fields: Object.fromEntries(fields) } });
}

/** The catalog body for `code`, its message in the requester's language (request-language.ts). */
export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  fields?: Record<string, string[]>,
  current?: Record<string, unknown>,
  conflicts?: readonly string[],
) {
  const language = reply.request ? requestLanguage(reply.request) : 'en';
  const body = errorBody(code, fields, language);
  return reply
    .code(ERROR_CATALOG[code].http)
    .send({ ...body, ...(current ? { current } : {}), ...(conflicts ? { conflicts } : {}) });
}

/** Fastify's own errors, by code, then by status: the catalog code a client sees instead. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_MAX_PARAM_LENGTH: 'uri_too_long',
  FST_ERR_BAD_URL: 'invalid_request',
};
const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
};
// Fixed texts for the body errors: the parser's own message can quote the input.
const BODY_FIELDS: Record<string, string> = {
  FST_ERR_CTP_EMPTY_JSON_BODY: 'expected a JSON body',
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'content-length does not match the body',
};

/** The catalog code for a framework error, or undefined when it is a server fault. */
export function catalogCodeFor(error: Pick<FastifyError, 'code' | 'statusCode'>): ErrorCode | undefined {
  return (
    FASTIFY_CODES[error.code] ??
    (error.statusCode !== undefined && error.statusCode < 500
      ? (STATUS_CODES[error.statusCode] ?? 'invalid_request')
      : undefined)
  );
}

/** The 400 fields of a framework error, fixed text only. */
export function fieldsFor(error: Pick<FastifyError, 'code'>): Record<string, string[]> | undefined {
  const text = BODY_FIELDS[error.code];
  return text ? { '(body)': [text] } : undefined;
}

/**
 * The edge hides internals (STYLE 2): a client gets a catalog code and its fixed message; the
 * cause goes to the log with the request and trace ids. A known path asked with a method it
 * does not serve is 405 with `allow`, not 404.
 */
export function installErrorHandler(app: FastifyInstance, methods: MethodIndex): void {
  app.setErrorHandler((error: FastifyError | QuillError, request, reply) => {
    if (error instanceof QuillError) {
      if (error.spec.http >= 500)
        request.log.error({ err: error.cause ?? error, code: error.code }, 'request failed');
      const fields = error.details?.fields as Record<string, string[]> | undefined;
      // Only a rev conflict carries what stands now and, for structured state, the parts both
      // sides changed (docs/kernel.md "Commits with rev").
      const current = error.details?.current as Record<string, unknown> | undefined;
      const conflicts = error.details?.conflicts as string[] | undefined;
      return sendError(reply, error.code, fields, current, conflicts);
    }
    const code = catalogCodeFor(error);
    if (code) {
      request.log.info({ code: error.code, status: error.statusCode }, 'request refused by the framework');
      return sendError(reply, code, fieldsFor(error));
    }
    request.log.error({ err: error }, 'unhandled request error');
    return sendError(reply, 'internal_error');
  });
  app.setNotFoundHandler((request, reply) => {
    const allowed = methods.allowedFor(request.url);
    if (allowed.length === 0) return sendError(reply, 'not_found');
    return sendError(reply.header('allow', allowed.join(', ')), 'method_not_allowed');
  });
}

import { providerError } from './http-io.ts';
import type { ErrorStep } from './script-schema.ts';

/**
 * The error object hosted OpenAI-compatible providers send for each refusal, so that a client
 * sees what it would see in production: a revoked key (401), an account out of credit (402),
 * a key without access to the model (403), a rate limit (429), an outage (5xx).
 */
export function defaultErrorBody(status: number) {
  switch (status) {
    case 401:
      return providerError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    case 402:
      return providerError('Insufficient balance.', 'insufficient_quota', 'insufficient_quota');
    case 403:
      return providerError('You do not have access to this model.', 'permission_error', 'model_not_found');
    case 429:
      return providerError('Rate limit reached for requests.', 'requests', 'rate_limit_exceeded');
    default:
      return status >= 500
        ? providerError('The server had an error while processing your request.', 'server_error', null)
        : providerError('scripted error', 'invalid_request_error', null);
  }
}

/** The response headers of a scripted error: `retry-after` (seconds or HTTP-date) and `retry-after-ms`. */
export function errorHeaders(error: ErrorStep['error']): Record<string, string> {
  return {
    ...(error.retry_after === undefined ? {} : { 'retry-after': String(error.retry_after) }),
    ...(error.retry_after_ms === undefined ? {} : { 'retry-after-ms': String(error.retry_after_ms) }),
  };
}

import { QuillApiError } from '@quill/client';
import { ERROR_CATALOG, type ErrorCode } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { explainError } from '../src/api/errors.ts';
import { en } from '../src/strings-en.ts';
import { zh } from '../src/strings-zh.ts';

const refusal = (code: ErrorCode) =>
  new QuillApiError(ERROR_CATALOG[code].http, {
    error: { code, message: ERROR_CATALOG[code].message, retryable: ERROR_CATALOG[code].retryable },
  });

describe('explainError', () => {
  it('says what a busy session, an empty quota and a rate limit mean, in both languages', () => {
    expect(explainError(en, refusal('session_busy'))).toBe(en.errorSessionBusy);
    expect(explainError(en, refusal('quota_exhausted'))).toBe(en.errorQuota);
    expect(explainError(en, refusal('cost_cap_reached'))).toBe(en.errorCostCap);
    expect(explainError(en, refusal('rate_limited'))).toBe(en.errorRateLimited);
    expect(explainError(zh, refusal('too_many_active_runs'))).toBe(zh.errorTooManyRuns);
    expect(explainError(zh, new TypeError('Failed to fetch'))).toBe(zh.errorNetwork);
  });

  it('has every English string in Chinese too', () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });
});

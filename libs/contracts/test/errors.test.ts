import { globSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CATALOG,
  ERROR_CODES,
  ERROR_MESSAGES_ZH,
  type ErrorCode,
  errorBody,
  errorFrame,
  errorMessage,
  isErrorCode,
  localizeFrame,
  QuillError,
} from '../src/index.ts';

const REPO_ROOT = join(import.meta.dirname, '../../..');

/**
 * Codes in the catalog that no service uses yet, because the feature that raises them lands in
 * a later issue. Remove a code from here in the change that starts using it; a new code that is
 * neither used nor listed here fails the test below.
 */
const RESERVED_FOR_LATER: readonly ErrorCode[] = [
  // Superseded by workflow_stopped(wall_clock_timeout); kept because the contract is additive-only
  // (docs/agent-behaviour.md §四) and stored frames of older runs still carry it.
  'run_timeout',
];

function sourceFilesOutsideContracts(): string[] {
  return globSync(['services/*/src/**/*.ts', 'libs/*/src/**/*.ts'], { cwd: REPO_ROOT }).filter(
    (path) => !path.startsWith(join('libs', 'contracts')),
  );
}

function referencedCodes(): Set<ErrorCode> {
  const sources = sourceFilesOutsideContracts().map((path) => readFileSync(join(REPO_ROOT, path), 'utf8'));
  return new Set(ERROR_CODES.filter((code) => sources.some((source) => source.includes(`'${code}'`))));
}

describe('ERROR_CATALOG', () => {
  it.each(ERROR_CODES)('%s has an http status, a plain message and boolean flags', (code) => {
    const spec = ERROR_CATALOG[code];
    expect(spec.http).toBeGreaterThanOrEqual(400);
    expect(spec.http).toBeLessThanOrEqual(599);
    expect(Number.isInteger(spec.http)).toBe(true);
    expect(spec.message.trim().length).toBeGreaterThan(0);
    expect(spec.message).toBe(spec.message.trim());
    // Author-facing text only: no stack frames, file paths, error class names or placeholders.
    expect(spec.message).not.toMatch(/\n|\bat\s+\S+\s*\(|\.ts\b|\.js\b|Error:|\$\{|undefined|null/);
    expect(typeof spec.retryable).toBe('boolean');
    expect(typeof spec.refundable).toBe('boolean');
  });

  it('codes are snake_case and isErrorCode recognises exactly them', () => {
    for (const code of ERROR_CODES) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(isErrorCode(code)).toBe(true);
    }
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('not_a_code')).toBe(false);
  });

  it('every code is used outside libs/contracts or explicitly reserved', () => {
    expect(sourceFilesOutsideContracts().length).toBeGreaterThan(10);
    const used = referencedCodes();
    const unused = ERROR_CODES.filter((code) => !used.has(code) && !RESERVED_FOR_LATER.includes(code));
    expect(
      unused,
      `error codes defined but never used (use them or list them in RESERVED_FOR_LATER)`,
    ).toEqual([]);
  });

  it('RESERVED_FOR_LATER lists only catalog codes that are still unused', () => {
    const used = referencedCodes();
    for (const code of RESERVED_FOR_LATER) expect(isErrorCode(code), code).toBe(true);
    const nowUsed = RESERVED_FOR_LATER.filter((code) => used.has(code));
    expect(nowUsed, 'these reserved codes are used now: remove them from RESERVED_FOR_LATER').toEqual([]);
  });
});

describe('error messages in both languages', () => {
  // Adding a code means adding both texts: English in ERROR_CATALOG, Chinese in error-messages.ts.
  it.each(ERROR_CODES)('%s has an English and a Chinese message', (code) => {
    const zh = ERROR_MESSAGES_ZH[code];
    expect(zh, `${code} has no Chinese message in error-messages.ts`).toBeTypeOf('string');
    expect(zh!.trim()).toBe(zh);
    expect(zh).toMatch(/[\u3400-\u9fff]/);
    expect(zh).not.toMatch(/\n|\.ts\b|Error:|\$\{|undefined|null/);
    expect(ERROR_CATALOG[code].message).not.toMatch(/[\u3400-\u9fff]/);
    expect(errorMessage(code, 'zh')).toBe(zh);
    expect(errorMessage(code, 'en')).toBe(ERROR_CATALOG[code].message);
  });

  it('has no Chinese message for a code the catalog does not have', () => {
    expect(Object.keys(ERROR_MESSAGES_ZH).filter((code) => !isErrorCode(code))).toEqual([]);
  });

  it('keeps the code and flags and changes only the message with the language', () => {
    expect(errorBody('session_busy', undefined, 'zh')).toEqual({
      error: { code: 'session_busy', message: ERROR_MESSAGES_ZH.session_busy, retryable: true },
    });
    const zh = errorFrame('r1', 'model_error', 'zh');
    const en = errorFrame('r1', 'model_error');
    expect({ ...zh, ts: '', message: '' }).toEqual({ ...en, ts: '', message: '' });
    expect(zh.message).toBe(ERROR_MESSAGES_ZH.model_error);
    expect(en.message).toBe(ERROR_CATALOG.model_error.message);
    expect(localizeFrame(en, 'zh')).toEqual(zh.message === en.message ? en : { ...en, message: zh.message });
    expect(localizeFrame(zh, 'en').message).toBe(en.message);
    const text = { type: 'text', run_id: 'r1', ts: '', agent: 'writer', content: 'x' } as const;
    expect(localizeFrame(text, 'zh')).toBe(text);
  });
});

describe('QuillError and errorBody', () => {
  it('QuillError carries its code, the fixed message, cause and details', () => {
    const cause = new Error('pg: connection refused at 10.0.0.3');
    const error = new QuillError('context_unavailable', { cause, details: { runId: 'r1' } });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('QuillError');
    expect(error.code).toBe('context_unavailable');
    expect(error.message).toBe(ERROR_CATALOG.context_unavailable.message);
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ runId: 'r1' });
    expect(error.spec).toBe(ERROR_CATALOG.context_unavailable);
  });

  it('errorBody exposes code, message and retryable, plus fields when given', () => {
    expect(errorBody('session_busy')).toEqual({
      error: { code: 'session_busy', message: ERROR_CATALOG.session_busy.message, retryable: true },
    });
    expect(errorBody('invalid_request', { message: ['Required'] })).toEqual({
      error: {
        code: 'invalid_request',
        message: ERROR_CATALOG.invalid_request.message,
        retryable: false,
        fields: { message: ['Required'] },
      },
    });
  });
});

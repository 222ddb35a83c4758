import { ERROR_CATALOG, type ErrorCode, ErrorResponse, isErrorCode } from '@quill/contracts';

/** A refusal from the API: the catalog code with its status and flags, and the bad fields of a 400. */
export class QuillApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | 'unexpected_response';
  readonly retryable: boolean;
  readonly fields: Readonly<Record<string, readonly string[]>> | undefined;
  /** On 409 `restore_conflict`: what changed since (README "Snapshots, undo and branches"). */
  readonly conflicts:
    | ReadonlyArray<{ file_id: string | null; title: string; changed_by: string }>
    | undefined;
  constructor(status: number, body: unknown) {
    const parsed = ErrorResponse.safeParse(body);
    const code = parsed.success && isErrorCode(parsed.data.error.code) ? parsed.data.error.code : undefined;
    super(code ? ERROR_CATALOG[code].message : `unexpected response ${status}`);
    this.name = new.target.name;
    this.status = status;
    this.code = code ?? 'unexpected_response';
    this.retryable = parsed.success ? parsed.data.error.retryable : status >= 500;
    this.fields = parsed.success ? parsed.data.error.fields : undefined;
    this.conflicts = parsed.success ? parsed.data.error.conflicts : undefined;
  }
}

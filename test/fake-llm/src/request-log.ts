/** One chat completion request as the fake received it. */
export interface RecordedRequest {
  run_id: string | null;
  role: string | null;
  /** ms since the epoch */
  received_at: number;
  /** Request headers, lower-case names, the API key masked. */
  headers: Record<string, string>;
  body: unknown;
  /** The usage the fake reported for this request, when it sent one (tests sum it against billing). */
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  /**
   * Streamed replies only, for benchmarks: when the response started (ms since the epoch, sub-ms)
   * and, per content delta, the reply's length so far (UTF-16 units) and its `x_emitted_at`. A
   * client that sees the text arrive can tell when each piece left the model.
   */
  stream?: { started_at: number; content_end: number[]; emitted_at: number[] };
}

export interface RequestFilter {
  run_id?: string;
  role?: string;
}

export interface RequestLog {
  record(entry: RecordedRequest): void;
  list(filter?: RequestFilter): RecordedRequest[];
  clear(): void;
}

/** Keeps the newest `limit` requests so that long benchmarks do not grow memory without bound. */
export function createRequestLog(limit: number): RequestLog {
  let entries: RecordedRequest[] = [];
  return {
    record(entry) {
      entries.push(entry);
      if (entries.length > limit) entries.shift();
    },
    list(filter = {}) {
      return entries.filter(
        (entry) =>
          (filter.run_id === undefined || entry.run_id === filter.run_id) &&
          (filter.role === undefined || entry.role === filter.role),
      );
    },
    clear() {
      entries = [];
    },
  };
}

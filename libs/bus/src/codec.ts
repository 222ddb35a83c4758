import type { z } from 'zod';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Thrown when a bus message does not match its envelope schema. */
export class InvalidEnvelopeError extends Error {
  readonly subject: string;
  readonly issues: string[];
  constructor(subject: string, issues: string[], options?: { cause?: unknown }) {
    super(`invalid envelope on ${subject}: ${issues.slice(0, 5).join('; ')}`, options);
    this.name = new.target.name;
    this.subject = subject;
    this.issues = issues;
  }
}

export function decodeEnvelope<S extends z.ZodType>(
  schema: S,
  subject: string,
  data: Uint8Array,
): z.infer<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(data));
  } catch (cause) {
    throw new InvalidEnvelopeError(subject, ['body is not JSON'], { cause });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new InvalidEnvelopeError(
      subject,
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  return parsed.data;
}

/** Per-run subjects carry the run id as a token: `…run.<runId>.events`, `…task.<role>.<runId>`. */
export function runIdFromSubject(subject: string): string | undefined {
  const tokens = subject.split('.');
  const runIndex = tokens.lastIndexOf('run');
  if (runIndex >= 0 && tokens[runIndex + 1]) return tokens[runIndex + 1];
  const taskIndex = tokens.lastIndexOf('task');
  if (taskIndex >= 0 && tokens[taskIndex + 2]) return tokens[taskIndex + 2];
  const startIndex = tokens.lastIndexOf('start');
  if (startIndex >= 0 && tokens[startIndex + 1]) return tokens[startIndex + 1];
  return undefined;
}

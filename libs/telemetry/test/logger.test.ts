import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/index.ts';
import { REDACTED_CENSOR, runLogger } from '../src/logger.ts';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (line: string) => void lines.push(JSON.parse(line)) };
  return { lines, destination };
}

describe('createLogger', () => {
  it('writes JSON with service and instance and a level name', () => {
    const { lines, destination } = capture();
    createLogger({ service: 'quill-writer', instanceId: 'writer-1', destination }).info('ready');
    expect(lines[0]).toMatchObject({
      service: 'quill-writer',
      instance: 'writer-1',
      level: 'info',
      msg: 'ready',
    });
  });

  it('redacts secrets at the top level, one level down and in headers', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'quill-gateway', instanceId: 'gateway-1', destination });
    logger.info(
      {
        apiKey: 'sk-top',
        password: 'hunter2',
        provider: { apiKey: 'sk-nested', api_key: 'sk-snake', baseUrl: 'http://llm' },
        request: { authorization: 'Bearer abc', token: 't0k', key: 'k3y' },
        headers: { authorization: 'Bearer def', 'x-api-key': 'xyz', accept: 'text/event-stream' },
      },
      'call',
    );
    const line = lines[0]!;
    const serialized = JSON.stringify(line);
    for (const secret of ['sk-top', 'hunter2', 'sk-nested', 'sk-snake', 'abc', 't0k', 'k3y', 'def', 'xyz']) {
      expect(serialized).not.toContain(secret);
    }
    expect(line.provider).toEqual({
      apiKey: REDACTED_CENSOR,
      api_key: REDACTED_CENSOR,
      baseUrl: 'http://llm',
    });
    expect(line.headers).toEqual({
      authorization: REDACTED_CENSOR,
      'x-api-key': REDACTED_CENSOR,
      accept: 'text/event-stream',
    });
  });

  it('respects the level', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', instanceId: 'i', level: 'warn', destination });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines.map((line) => line.msg)).toEqual(['kept']);
  });

  it('omits trace fields outside a span', () => {
    const { lines, destination } = capture();
    createLogger({ service: 's', instanceId: 'i', destination }).info('no span');
    expect(lines[0]).not.toHaveProperty('trace_id');
  });
});

describe('runLogger', () => {
  it('binds run, session and request ids to every line', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', instanceId: 'i', destination });
    const child = runLogger(logger, { runId: 'run-1', sessionId: 'session-1', requestId: 'request-1' });
    child.info('step');
    runLogger(logger, { runId: 'run-2' }).info('bare');
    expect(lines[0]).toMatchObject({ run_id: 'run-1', session_id: 'session-1', request_id: 'request-1' });
    expect(lines[1]).toMatchObject({ run_id: 'run-2' });
    expect(lines[1]).not.toHaveProperty('session_id');
  });
});

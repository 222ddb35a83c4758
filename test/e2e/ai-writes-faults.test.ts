import { isTerminalFrame, type SseFrame, standingFrames } from '@quill/contracts';
import { listFiles, listFileVersions } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateName, launchRun } from '../support/background-run.ts';
import { type ServiceProcess, type Stack, startStack } from '../support/stack.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

/**
 * AI writes under faults (docs/ai-writes.md): a writer killed after or during a body continues
 * on the next writer from its step journal, and a database cut during the save is ridden out.
 * The writer's ack wait is short so a killed writer's step comes back quickly.
 */
let stack: Stack;
let proxy: TcpProxy;
let writer: ServiceProcess;
beforeAll(async () => {
  stack = await startStack({ replicas: { writer: 0 }, env: { TASK_ACK_WAIT_S: '4' } });
  proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(stack.databaseUrl).port || 5432) });
  writer = await startWriter();
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

/** Writers reach Postgres through the proxy, so a test can cut them off. */
const startWriter = () =>
  stack.startService('writer', { DATABASE_URL: proxy.urlFor(stack.databaseUrl), WORKER_DRAIN_MS: '200' });

async function killWriter(): Promise<void> {
  const exited = new Promise((resolve) => writer.child.once('exit', resolve));
  writer.child.kill('SIGKILL');
  await exited;
}

const gate = gateName;

function launch(message: string) {
  const run = launchRun(stack, message);
  const frames = (async () => {
    expect(await run.status).toBe(200);
    return run.frames;
  })();
  frames.catch(() => undefined);
  return { frames, runId: run.runId };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 0; tries < 600; tries++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const fileByTitle = async (title: string) =>
  (await listFiles(stack.pool, stack.projectId)).find((file) => file.title === title);

const BODY = '夜雨敲窗，林晚把旧信摊在桌上。信纸泛黄，字迹却还清楚。她读到第三行，忽然停住了。';
const ofType = <T extends SseFrame['type']>(frames: SseFrame[], type: T) =>
  frames.filter((frame): frame is Extract<SseFrame, { type: T }> => frame.type === type);

describe('redelivered steps continue from their journal', () => {
  it('a writer killed after saving the body: no second version, no second model call, one terminal', async () => {
    const title = '第七章';
    const name = gate('after-body');
    const reply = `<file>\n${BODY}\n</file>\n`;
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: `${reply}写完了，最后检查一遍。`, pause: name, pause_at_chars: reply.length + 3 },
        // What the dead writer said after `</file>` is lost, so to the run the reply ended on the
        // file block, and the same agent is asked to go on (without rewriting what is saved).
        { text: '第七章已经写好了。' },
      ],
    });
    const run = launch(`写${title}`);
    await stack.fakeLlm.gateReached(name);
    const file = await until('the body save', async () => {
      const found = await fileByTitle(title);
      return found && found.version === 1 ? found : undefined;
    });
    await killWriter();
    writer = await startWriter();
    stack.fakeLlm.releaseGate(name);
    const received = await run.frames;
    const runId = await run.runId;

    const versions = await listFileVersions(stack.pool, file.id);
    expect(versions.map((version) => [version.version, version.source, version.content])).toEqual([
      [1, 'ai', BODY],
    ]);
    const requests = stack.fakeLlm.requests({ run_id: runId, role: 'writer' });
    expect(requests).toHaveLength(3);
    expect(JSON.stringify(requests[2]!.body)).toContain('[文件流续写]');
    const frames = received.map((entry) => entry.frame);
    expect(frames.filter(isTerminalFrame)).toEqual([expect.objectContaining({ type: 'workflow_complete' })]);
    expect(ofType(frames, 'step_resumed')).toEqual([expect.objectContaining({ step: expect.any(Number) })]);
    const shown = standingFrames(received).map((entry) => entry.frame);
    expect(ofType(shown, 'file_saved')).toEqual([expect.objectContaining({ file_id: file.id, version: 1 })]);
    expect(ofType(shown, 'file_start')).toHaveLength(1);
    expect(shown.at(-1)?.type).toBe('done');
  });

  it('a writer killed mid-body: the next writer redoes only the unfinished call', async () => {
    const title = '第八章';
    const name = gate('mid-body');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '好的，我来写。',
          tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }],
        },
        { text: `<file>\n${BODY}\n</file>`, pause: name, pause_at_chars: 20 },
        { text: `<file>\n${BODY}\n</file>\n写好了。` },
      ],
    });
    const run = launch(`写${title}`);
    await stack.fakeLlm.gateReached(name);
    await killWriter();
    writer = await startWriter();
    stack.fakeLlm.releaseGate(name);
    const received = await run.frames;
    const runId = await run.runId;

    const file = await fileByTitle(title);
    expect(file).toMatchObject({ content: BODY, version: 1 });
    const requests = stack.fakeLlm.requests({ run_id: runId, role: 'writer' });
    // create_file, the cut body, its redo: the finished create_file call was not made again.
    expect(requests).toHaveLength(3);
    const frames = received.map((entry) => entry.frame);
    expect(frames.filter(isTerminalFrame)).toEqual([expect.objectContaining({ type: 'workflow_complete' })]);
    const shown = standingFrames(received).map((entry) => entry.frame);
    expect(ofType(shown, 'tool_result').map((result) => result.tool_name)).toEqual(['create_file']);
    expect(ofType(shown, 'file_start')).toHaveLength(1);
    expect(
      ofType(shown, 'file_delta')
        .map((delta) => delta.content)
        .join(''),
    ).toBe(`\n${BODY}\n`);
    expect(ofType(shown, 'agent_start').filter((start) => start.agent === 'writer')).toHaveLength(1);
  });
});

describe('a writer shutting down hands its step back', () => {
  it('SIGTERM mid-body: the step goes back at once with its journal, the writer exits 0, nothing repeats', async () => {
    const title = '第十章';
    const name = gate('sigterm');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: `<file>\n${BODY}\n</file>`, pause: name, pause_at_chars: 20 },
        { text: `<file>\n${BODY}\n</file>\n写好了。` },
      ],
    });
    const run = launch(`写${title}`);
    await stack.fakeLlm.gateReached(name);
    const leaving = writer;
    // The taker is up before the old one leaves, as in a rolling update.
    writer = await startWriter();
    const exited = new Promise<number | null>((resolve) => leaving.child.once('exit', resolve));
    leaving.child.kill('SIGTERM');
    expect(await exited, leaving.output().slice(-4000)).toBe(0);
    stack.fakeLlm.releaseGate(name);
    const received = await run.frames;
    const runId = await run.runId;

    expect(await fileByTitle(title)).toMatchObject({ content: BODY, version: 1 });
    // create_file once, the cut body, its redo on the other writer.
    expect(stack.fakeLlm.requests({ run_id: runId, role: 'writer' })).toHaveLength(3);
    const frames = received.map((entry) => entry.frame);
    expect(frames.filter(isTerminalFrame)).toEqual([expect.objectContaining({ type: 'workflow_complete' })]);
    const shown = standingFrames(received).map((entry) => entry.frame);
    expect(ofType(shown, 'tool_result').map((result) => result.tool_name)).toEqual(['create_file']);
    expect(
      ofType(shown, 'file_delta')
        .map((delta) => delta.content)
        .join(''),
    ).toBe(`\n${BODY}\n`);
    expect(ofType(shown, 'file_saved')).toHaveLength(1);
  });
});

describe('transient database faults on the write path', () => {
  it('a body saved while the writer is cut off from Postgres is retried and lands once', async () => {
    const title = '第九章';
    const name = gate('db-cut');
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
        { text: `<file>\n${BODY}\n</file>\n写好了。`, pause: name, pause_at_chars: 10 },
      ],
    });
    const run = launch(`写${title}`);
    await stack.fakeLlm.gateReached(name);
    const before = proxy.attemptsWhileCut;
    proxy.cut();
    stack.fakeLlm.releaseGate(name);
    // Restore only once the writer has really tried (and failed) to reach the database.
    await until('a refused connection', async () =>
      proxy.attemptsWhileCut >= before + 2 ? true : undefined,
    );
    proxy.restore();
    const frames = (await run.frames).map((entry) => entry.frame);

    expect(frames.filter(isTerminalFrame)).toEqual([expect.objectContaining({ type: 'workflow_complete' })]);
    const file = await fileByTitle(title);
    expect(file).toMatchObject({ content: BODY, version: 1 });
    expect(await listFileVersions(stack.pool, file!.id)).toHaveLength(1);
  });
});

import { type Bus, connectBus, readStored } from '@quill/bus';
import { type AgentRole, type SseFrame, StepRecordEnvelope, type StepResult } from '@quill/contracts';
import { appendMessage, createProject, createSession } from '@quill/db/gateway';
import { chapterBody, type ScriptedToolCall, type TextStep } from '@quill/fake-llm';
import { expect } from 'vitest';
import { readStream, startRun } from '../support/sse-client.ts';
import type { Stack } from '../support/stack.ts';
import { testUrls } from '../support/urls.ts';

/** Helpers shared by the workflow e2e files: one turn, its frames, its steps, its rows. */

export interface Turn {
  runId: string;
  sessionId: string;
  frames: SseFrame[];
  /** The frames that show the workflow's shape: no text / file deltas / thinking / tool cards. */
  outline: string[];
}

const NOISE = new Set([
  'text',
  'file_delta',
  'thinking',
  'tool_call',
  'tool_result',
  'file_start',
  'file_saved',
  'tool_progress',
]);

/** `agent_start:writer`, `handoff:planner>writer`, `workflow_stopped:read_only_handoff_blocked`… */
export function outlineOf(frames: readonly SseFrame[]): string[] {
  return frames
    .filter((value) => !NOISE.has(value.type))
    .map((value) => {
      switch (value.type) {
        case 'routing_decided':
          return `routing_decided:${value.agent}/${value.workflow_plan}/${value.source}`;
        case 'agent_start':
        case 'message_end':
        case 'clarification_requested':
          return `${value.type}:${value.agent}`;
        case 'handoff':
          return `handoff:${value.from_agent}>${value.to_agent}`;
        case 'workflow_stopped':
          return `workflow_stopped:${value.reason}`;
        default:
          return value.type;
      }
    });
}

export async function runTurn(
  stack: Stack,
  body: { message: string; session_id?: string; generation_mode?: 'fast' | 'quality'; project_id?: string },
): Promise<Turn> {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, { project_id: stack.projectId, ...body });
  expect(response.status).toBe(200);
  const result = await readStream(response);
  const frames = result.frames.map((received) => received.frame);
  const started = frames[0];
  if (started?.type !== 'run_started') throw new Error(`first frame: ${started?.type}`);
  expect(frames.at(-1)?.type).toBe('done');
  return { runId: started.run_id, sessionId: started.session_id, frames, outline: outlineOf(frames) };
}

export function scriptRouter(stack: Stack, decision: Record<string, unknown> | string): void {
  stack.fakeLlm.addScript({
    match: { role: 'router' },
    responses: [{ text: typeof decision === 'string' ? decision : JSON.stringify(decision) }],
  });
}

export function routing(agent: AgentRole, plan: string, extra: Record<string, unknown> = {}) {
  return {
    current_agent: agent,
    workflow_plan: plan,
    write_content: true,
    read_only: false,
    scope: '写第一章',
    ...extra,
  };
}

/** The two replies of a file write: create_file, then the body (and optional words after it). */
export function fileReplies(
  body: string,
  options: {
    before?: string;
    after?: string;
    fileType?: string;
    title?: string;
    afterTools?: ScriptedToolCall[];
  } = {},
): TextStep[] {
  return [
    {
      text: options.before ?? '',
      tool_calls: [
        {
          name: 'create_file',
          arguments: { title: options.title ?? '第一章 雨夜', file_type: options.fileType ?? 'draft' },
        },
      ],
    },
    {
      text: `<file>\n${body}\n</file>${options.after ?? ''}`,
      ...(options.afterTools ? { tool_calls: options.afterTools } : {}),
    },
  ];
}

export const LONG_BODY = chapterBody();

export function handoffCall(to: AgentRole, reason: string): ScriptedToolCall {
  return { name: 'handoff_to_agent', arguments: { to_agent: to, reason } };
}

/** Makes the project's next message not its first: an earlier session with an AI reply. */
export async function giveProjectHistory(stack: Stack, projectId = stack.projectId): Promise<void> {
  const session = await createSession(stack.pool, { projectId, userId: stack.userId, title: 'earlier' });
  await appendMessage(stack.pool, { sessionId: session.sessionId, role: 'user', content: '你好' });
  await appendMessage(stack.pool, {
    sessionId: session.sessionId,
    role: 'assistant',
    content: '你好，我们开始吧。',
  });
}

export async function freshProject(stack: Stack, title: string): Promise<string> {
  return (await createProject(stack.pool, { ownerId: stack.userId, title, projectType: 'novel' })).id;
}

export async function connectTestBus(stack: Stack): Promise<Bus> {
  return connectBus({ url: testUrls.nats, namespace: stack.namespace, name: 'workflow-test' });
}

export async function stepResults(bus: Bus, runId: string): Promise<StepResult[]> {
  const items = await readStored(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.steps(runId),
    schema: StepRecordEnvelope,
  });
  return items
    .flatMap((item) => (item.envelope?.kind === 'result' ? [item.envelope.result] : []))
    .sort((a, b) => a.step - b.step);
}

/** The last input message a role's model call received in this run (the run's directive). */
export function lastInputOf(stack: Stack, runId: string, role: AgentRole, callIndex = -1): string {
  const calls = stack.fakeLlm.requests({ run_id: runId, role });
  const call = calls.at(callIndex);
  const messages = (call?.body as { messages?: Array<{ role: string; content: string | null }> } | undefined)
    ?.messages;
  if (!messages) throw new Error(`no ${role} call ${callIndex} in run ${runId}`);
  const lastUser = messages.findLast((message) => message.role === 'user');
  return lastUser?.content ?? '';
}

export async function userMessageRouting(stack: Stack, runId: string): Promise<Record<string, unknown>> {
  const { rows } = await stack.pool.query<{ routing: Record<string, unknown> }>(
    `SELECT routing FROM messages WHERE run_id = $1 AND role = 'user'`,
    [runId],
  );
  return rows[0]!.routing;
}

export async function assistantReply(stack: Stack, runId: string): Promise<string | undefined> {
  const { rows } = await stack.pool.query<{ content: string }>(
    `SELECT content FROM messages WHERE run_id = $1 AND role = 'assistant'`,
    [runId],
  );
  return rows[0]?.content;
}

export async function runRow(stack: Stack, runId: string) {
  const { rows } = await stack.pool.query<{ phase: string; stop_reason: string | null }>(
    'SELECT phase, stop_reason FROM runs WHERE run_id = $1',
    [runId],
  );
  return rows[0]!;
}

export function textOf(frames: readonly SseFrame[]): string {
  return frames.map((value) => (value.type === 'text' ? value.content : '')).join('');
}

import {
  type AgentRole,
  errorFrame,
  frame,
  type RunOutcome,
  type SseFrame,
  type WorkflowStoppedReason,
} from '@quill/contracts';

/** Frame builders and run shapes for the billing decision table (decision.test.ts). */
export const RUN = 'run-1';
export const started = frame('run_started', RUN, {
  session_id: 's',
  project_id: 'p',
  generation_mode: 'fast',
});
export const agentStart = (agent: AgentRole = 'writer') => frame('agent_start', RUN, { agent, step: 0 });
export const text = (content: string, agent: AgentRole = 'writer') => frame('text', RUN, { agent, content });
export const prose = (chars: number, agent: AgentRole = 'writer') => text('字'.repeat(chars), agent);
export const thinking = (content: string) => frame('thinking', RUN, { agent: 'writer', content });
export const toolCall = (name: string, id = 'call-1') =>
  frame('tool_call', RUN, { agent: 'writer', tool_call_id: id, tool_name: name, arguments: {} });
export const toolResult = (name: string, status: 'ok' | 'error' = 'ok', id = 'call-1') =>
  frame('tool_result', RUN, { agent: 'writer', tool_call_id: id, tool_name: name, status, summary: '' });
export const fileStart = frame('file_start', RUN, {
  agent: 'writer',
  file_id: 'f',
  title: '第一章',
  file_type: 'draft',
});
export const fileDelta = frame('file_delta', RUN, { file_id: 'f', content: '雨夜' });
export const fileSaved = (chars: number) =>
  frame('file_saved', RUN, { file_id: 'f', title: '第一章', version: 1, chars });
export const messageEnd = (stopReason: string) =>
  frame('message_end', RUN, { agent: 'writer', stop_reason: stopReason });
export const complete = frame('workflow_complete', RUN, {});
export const stopped = (reason: WorkflowStoppedReason) => frame('workflow_stopped', RUN, { reason });
export const refundableError = errorFrame(RUN, 'model_error');
export const createEmptyFile = [toolCall('create_file'), toolResult('create_file'), fileStart, fileSaved(0)];
export const readFiles = [toolCall('query_files'), toolResult('query_files')];
export const wroteChapter = [
  toolCall('create_file'),
  toolResult('create_file'),
  fileStart,
  fileDelta,
  fileSaved(1200),
];

export interface Row {
  name: string;
  frames: SseFrame[];
  outcome?: RunOutcome;
  writeToolNames?: string[];
  expected: [decision: 'charge' | 'refund', reason: string];
}

export const runOf = (...frames: SseFrame[][]) => [started, agentStart(), ...frames.flat()];

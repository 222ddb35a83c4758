import type { SseFrame } from '@quill/contracts';

/** Renders frames the way a terminal reader can follow: prose inline, events as tags. */
export function printFrame(frame: SseFrame): void {
  switch (frame.type) {
    case 'text':
    case 'file_delta':
      process.stdout.write(frame.content);
      return;
    case 'routing_decided':
      process.stdout.write(
        `[routed: ${frame.workflow_agents.join(' → ') || frame.agent} (${frame.source})]\n`,
      );
      return;
    case 'handoff':
      process.stdout.write(`\n[handoff ${frame.from_agent} → ${frame.to_agent}: ${frame.reason}]\n`);
      return;
    case 'agent_start':
      process.stdout.write(`\n[${frame.agent} starts]\n`);
      return;
    case 'tool_call':
      process.stdout.write(`\n[tool ${frame.tool_name} ${JSON.stringify(frame.arguments)}]\n`);
      return;
    case 'tool_result':
      process.stdout.write(`[→ ${frame.status}: ${frame.summary}]\n`);
      return;
    case 'file_start':
      process.stdout.write(`\n[writing file “${frame.title}”]\n`);
      return;
    case 'file_saved':
      process.stdout.write(`\n[saved “${frame.title}” v${frame.version}, ${frame.chars} chars]\n`);
      return;
    case 'error':
      process.stdout.write(`\n[error ${frame.code}: ${frame.message}]\n`);
      return;
    default:
      process.stdout.write(`\n[${frame.type}]\n`);
  }
}

/**
 * A snapshot of the project's task board for <turn_context>. The board's shape belongs to the
 * tools that maintain it (update_project), so this reads it defensively: a task's title/status
 * when present, its JSON otherwise, and never more than a few thousand characters.
 */
const MAX_TASKS = 30;
const MAX_CHARS = 3_000;

export function renderTaskBoard(tasks: readonly unknown[]): string {
  const lines = tasks.slice(0, MAX_TASKS).map((task) => `- ${describe(task)}`);
  if (tasks.length > MAX_TASKS) lines.push(`- ……另有 ${tasks.length - MAX_TASKS} 项`);
  const text = lines.join('\n');
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}……` : text;
}

function describe(task: unknown): string {
  if (task && typeof task === 'object') {
    const record = task as Record<string, unknown>;
    const title = record.title ?? record.name ?? record.task;
    const status = record.status ?? record.state;
    if (typeof title === 'string') return typeof status === 'string' ? `[${status}] ${title}` : title;
  }
  return JSON.stringify(task);
}

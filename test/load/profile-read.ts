/**
 * A closer read of the profiles `capacity.ts --profile --keep-profiles` leaves: for one process
 * and one window (both printed by that run), the functions with the most samples of their own,
 * or with `--callers <function>` the stacks that called it (`--depth` frames up). Shares are of
 * the process's busy samples in the window (idle ones left out), as support/cpu-profile.ts counts
 * them. A system call's time is its caller's own: `writeBuffer`, for example, is a socket write,
 * and on loopback the kernel runs the receiving side's TCP work inside the sender's write
 * (docs/decisions/0074 has what `perf` showed of it).
 *
 *   node test/load/profile-read.ts --dir <dir> --pid <pid> --from <µs> --to <µs> [--top 40] [--callers writeBuffer --depth 8]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CpuProfile } from './support/cpu-profile.ts';
import { functionLabel } from './support/heap-samples.ts';

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    pid: { type: 'string' },
    from: { type: 'string', default: '0' },
    to: { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
    top: { type: 'string', default: '40' },
    callers: { type: 'string' },
    depth: { type: 'string', default: '8' },
  },
});
if (!values.dir || !values.pid) throw new Error('--dir and --pid are required');
const file = readdirSync(values.dir).find((name) => name.split('.')[3] === values.pid);
if (!file) throw new Error(`no profile of pid ${values.pid} in ${values.dir}`);
const profile = JSON.parse(readFileSync(join(values.dir, file), 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const where = (id: number): string => functionLabel(byId.get(id)!.callFrame);

const counts = new Map<string, number>();
let busy = 0;
let at = profile.startTime;
profile.samples.forEach((id, index) => {
  at += profile.timeDeltas[index] ?? 0;
  if (at < Number(values.from) || at > Number(values.to)) return;
  if (byId.get(id)?.callFrame.functionName === '(idle)') return;
  busy++;
  if (values.callers === undefined) {
    counts.set(where(id), (counts.get(where(id)) ?? 0) + 1);
    return;
  }
  if (byId.get(id)?.callFrame.functionName !== values.callers) return;
  const stack: string[] = [];
  for (
    let up = parentOf.get(id);
    up !== undefined && stack.length < Number(values.depth);
    up = parentOf.get(up)
  )
    stack.push(where(up));
  const key = stack.join('\n      < ');
  counts.set(key, (counts.get(key) ?? 0) + 1);
});
console.log(`${busy} busy samples in the window`);
for (const [key, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
  console.log(`${((100 * count) / Math.max(1, busy)).toFixed(1).padStart(5)} %  ${key}`);

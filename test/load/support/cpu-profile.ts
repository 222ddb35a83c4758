import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { table } from './stats.ts';

/*
 * Where a process's CPU went over a benchmark's window, from the V8 CPU profile that
 * `node --cpu-prof` writes when the process exits. V8 stamps the samples with the monotonic clock
 * in microseconds, the clock `process.hrtime` reads in every process of the machine, so a window
 * the benchmark measured (`monotonicMicros`) selects the samples taken inside it. A sample counts
 * for the first category one of the frames on its stack matches, so a category named earlier
 * takes the work it calls (the frame publish of a model read's token is the model read's if the
 * read comes first). Shares are of the samples the process was busy in (idle samples left out):
 * multiplied by the process's measured CPU they say how many µs each category took.
 */

export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber?: number };
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileCategory {
  name: string;
  /** Tested against `<function name> <script url>` of every frame on a sample's stack. */
  pattern: RegExp;
}

/** A sample no category matched: the garbage collector's, or `other`. */
export const GC = 'GC';
export const OTHER = 'other';

/** Now on the clock V8 stamps profile samples with (CLOCK_MONOTONIC, µs). */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

export function categoryShares(
  profile: CpuProfile,
  window: { fromUs: number; toUs: number },
  categories: readonly ProfileCategory[],
): { busySamples: number; shares: Record<string, number> } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  // A node's category is its stack's: found once per node, not once per sample.
  const categoryOf = new Map<number, string | undefined>();
  const nodeCategory = (id: number): string | undefined => {
    if (categoryOf.has(id)) return categoryOf.get(id);
    const frames: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { functionName, url } = byId.get(at)!.callFrame;
      frames.push(`${functionName} ${url}`);
    }
    const found = categories.find((category) => frames.some((frame) => category.pattern.test(frame)))?.name;
    categoryOf.set(id, found);
    return found;
  };
  const counts: Record<string, number> = {};
  let busySamples = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    at += profile.timeDeltas[index] ?? 0;
    if (at < window.fromUs || at > window.toUs) return;
    const name = byId.get(id)?.callFrame.functionName;
    if (name === '(idle)') return;
    busySamples++;
    const category = name === '(garbage collector)' ? GC : (nodeCategory(id) ?? OTHER);
    counts[category] = (counts[category] ?? 0) + 1;
  });
  const shares = Object.fromEntries(
    Object.entries(counts).map(([name, count]) => [name, count / Math.max(1, busySamples)]),
  );
  return { busySamples, shares };
}

/** The profiles `--cpu-prof-dir=dir` holds, by the pid in each file's name. */
export function readProfiles(dir: string): Map<number, CpuProfile> {
  const profiles = new Map<number, CpuProfile>();
  for (const file of readdirSync(dir)) {
    // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile
    const pid = /^CPU\.\d+\.\d+\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(file)?.[1];
    if (pid) profiles.set(Number(pid), JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile);
  }
  return profiles;
}

/** Each level's per-token CPU of the writer (all replicas) and the gateway, split by category. */
export function profileTable(
  profiles: ReadonlyMap<number, CpuProfile>,
  windows: ReadonlyArray<{ level: number; fromUs: number; toUs: number }>,
  figures: ReadonlyArray<Record<string, number | string>>,
  servicePids: Record<string, number | undefined>,
  categories: readonly ProfileCategory[],
): string {
  const names = [...categories.map((category) => category.name), GC, OTHER];
  const rows: Array<Array<string | number>> = [];
  for (const window of windows) {
    const figure = figures.find((f) => f.level === window.level);
    if (!figure) continue;
    const tokensPerSecond = Math.max(1, Number(figure.tokens_received_per_second));
    for (const service of ['writer', 'gateway']) {
      // The samples of all the service's replicas together, as its CPU figure counts them all.
      const samples: Record<string, number> = {};
      let busy = 0;
      for (const [instance, pid] of Object.entries(servicePids)) {
        const profile = pid === undefined ? undefined : profiles.get(pid);
        if (!profile || instance.replace(/-\d+$/, '') !== service) continue;
        const { busySamples, shares } = categoryShares(profile, window, categories);
        busy += busySamples;
        for (const [name, share] of Object.entries(shares))
          samples[name] = (samples[name] ?? 0) + share * busySamples;
      }
      if (busy === 0) continue;
      const perToken = (Number(figure[`${service}_cores`] ?? 0) * 1e6) / tokensPerSecond;
      rows.push([
        window.level,
        service,
        ...names.map((name) => Math.round((perToken * (samples[name] ?? 0)) / busy)),
      ]);
    }
  }
  // A service killed at the stop instead of exiting wrote no profile: say so rather than print nothing.
  if (rows.length === 0) return '(no profile covered a window: did the services exit cleanly?)';
  return table([['runs', 'process', ...names], ...rows]);
}

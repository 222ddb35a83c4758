import { table } from './stats.ts';

/*
 * The tables `capacity.ts` prints from each level's figures (one record per level, as its JSON
 * line has them): the level summary, each process's CPU per streamed frame or token, and the
 * kernel's part of it.
 */

export type LevelFigures = Record<string, number | string>;

/** Frame and token delays, throughput and each process's cores, one row per level. */
export function levelTable(figures: readonly LevelFigures[]): string {
  return table([
    [
      'runs',
      'frame p50',
      'frame p99',
      'token p50',
      'token p99',
      'held p99',
      'tok/frame',
      'frames/s',
      'services cores',
      'router',
      'nats',
      'redis',
      'fake LLM',
      'client',
      'machine',
      'failed',
      'load',
    ],
    ...figures.map((f) => [
      f.level!,
      f.frame_p50_ms!,
      f.frame_p99_ms!,
      f.token_p50_ms!,
      f.token_p99_ms!,
      f.held_p99_ms!,
      f.tokens_per_frame!,
      f.frames_per_second!,
      f.services_cpu_cores!,
      f.router_cores ?? 0,
      f.nats_cpu_cores!,
      f.redis_cpu_cores!,
      f.fake_llm_cpu_cores!,
      f.client_cpu_cores!,
      f.machine_cpu_cores!,
      f.failures!,
      f.load_average!,
    ]),
  ]);
}

/**
 * Where the CPU goes, per streamed frame and per streamed token: each process's CPU over the
 * window divided by the frames (tokens) the clients received in it. A process whose cost stays
 * per token when frames carry several (the writer reading the model, the fake LLM) is not made
 * cheaper by coalescing; one whose cost is per frame (NATS, the gateway, the client) is.
 */
export function cpuPerTable(
  figures: readonly LevelFigures[],
  unit: 'frames_per_second' | 'tokens_received_per_second',
): string {
  const per = (cores: number | string | undefined, figure: LevelFigures) =>
    Math.round((Number(cores ?? 0) * 1e6) / Math.max(1, Number(figure[unit])));
  return table([
    [
      'runs',
      'writer',
      'gateway',
      'router',
      'other services',
      'nats',
      'redis',
      'fake LLM',
      'client',
      'machine',
    ],
    ...figures.map((f) => {
      const named = ['writer_cores', 'gateway_cores', 'router_cores'].reduce(
        (sum, key) => sum + Number(f[key] ?? 0),
        0,
      );
      return [
        f.level!,
        per(f.writer_cores, f),
        per(f.gateway_cores, f),
        per(f.router_cores, f),
        per(Number(f.services_cpu_cores) - named, f),
        per(f.nats_cpu_cores, f),
        per(f.redis_cpu_cores, f),
        per(f.fake_llm_cpu_cores, f),
        per(f.client_cpu_cores, f),
        per(f.machine_cpu_cores, f),
      ];
    }),
  ]);
}

/** The system-time part of each process's CPU per token: what its socket I/O costs in the kernel. */
export function kernelPerTokenTable(figures: readonly LevelFigures[]): string {
  const processes = ['writer', 'gateway', 'nats-server', 'fake-llm', 'bench-client'];
  return table([
    ['runs', 'writer', 'gateway', 'nats', 'fake LLM', 'client'],
    ...figures.map((f) => [
      f.level!,
      ...processes.map((name) =>
        Math.round(
          (Number(f[`${name}_system_cores`] ?? 0) * 1e6) / Math.max(1, Number(f.tokens_received_per_second)),
        ),
      ),
    ]),
  ]);
}

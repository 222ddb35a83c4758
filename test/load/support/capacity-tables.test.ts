import { describe, expect, it } from 'vitest';
import { cpuPerTable, kernelPerTokenTable } from './capacity-tables.ts';

// One level: 2,000 frames and 4,000 tokens a second; cores as the capacity benchmark records them.
const figures = [
  {
    level: 100,
    frames_per_second: 2000,
    tokens_received_per_second: 4000,
    writer_cores: 0.4,
    gateway_cores: 0.1,
    router_cores: 0.02,
    services_cpu_cores: 0.6,
    nats_cpu_cores: 0.2,
    redis_cpu_cores: 0.004,
    fake_llm_cpu_cores: 0.12,
    client_cpu_cores: 0.08,
    machine_cpu_cores: 1.2,
    writer_system_cores: 0.08,
    'nats-server_system_cores': 0.04,
  },
];

const row = (text: string) =>
  text
    .trim()
    .split('\n')
    .at(-1)!
    .trim()
    .split(/\s{2,}/)
    .map(Number);

describe('the capacity benchmark’s CPU tables', () => {
  it('divides each process’s cores by the frames or tokens received, the unnamed services together', () => {
    // writer, gateway, router, other services (0.6 − 0.52), nats, redis, fake LLM, client, machine
    expect(row(cpuPerTable(figures, 'frames_per_second'))).toEqual([
      100, 200, 50, 10, 40, 100, 2, 60, 40, 600,
    ]);
    expect(row(cpuPerTable(figures, 'tokens_received_per_second'))).toEqual([
      100, 100, 25, 5, 20, 50, 1, 30, 20, 300,
    ]);
  });

  it('gives the kernel’s part per token, a process without a figure as 0', () => {
    expect(row(kernelPerTokenTable(figures))).toEqual([100, 20, 0, 10, 0, 0]);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../support/urls.ts';
import { type PrivateNats, startPrivateNats } from './private-nats.ts';
import { natsServerPid } from './proc.ts';

// The benchmarks read the CPU of the nats-server their stack uses; with a second server running
// (another benchmark's, or one left behind) the first process of that name may be the other one.
let other: PrivateNats;

beforeAll(async () => {
  other = await startPrivateNats();
});
afterAll(() => other?.stop());

describe('natsServerPid', () => {
  it('finds the server listening on the URL, not another process of the same name', () => {
    expect(natsServerPid(other.url)).toBe(other.pid);
    const machine = natsServerPid(testUrls.nats);
    expect(machine).toBeDefined();
    expect(machine).not.toBe(other.pid);
    expect(readFileSync(`/proc/${machine}/comm`, 'utf8').trim()).toBe('nats-server');
  });
});

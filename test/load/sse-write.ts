/**
 * What a gateway's CPU pays to write one SSE event to one open stream, the two ways it can:
 * `response.write` (Node frames the chunk and sends it on the next tick) and the relay's
 * `writeSseEvent` (services/gateway/src/sse-write.ts: the chunk in one socket write,
 * docs/decisions/0063). A child process serves `--streams` event-stream responses (started
 * with the gateway's own `startSseResponse` for the second way); a second process reads them all,
 * as browsers would. The
 * server writes a text frame as the relay writes it to every stream `--rate` times a second,
 * spread over the second as live runs' tokens are, for `--seconds`; its own CPU divided by the
 * events written is the figure. Each variant runs in its own server process, alternated
 * `--rounds` times. Prints the CPU per event (user and system) with the load average, and one
 * JSON line.
 *
 *   node test/load/sse-write.ts [--streams 300] [--rate 20] [--seconds 6] [--rounds 3]
 */
import { execFileSync, fork } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { parseArgs } from 'node:util';
import { encodeSseFrame, encodeSseRetry, frame, SSE_HEADERS } from '@quill/contracts';
import { startSseResponse, writeSseEvent } from '../../services/gateway/src/sse-write.ts';
import { loadAverage } from './support/proc.ts';
import { distribution, rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '300' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '3' },
    role: { type: 'string' },
    variant: { type: 'string' },
    port: { type: 'string' },
  },
});
const streams = Number(values.streams);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const VARIANTS = ['response.write', 'writeSseEvent'] as const;
type Variant = (typeof VARIANTS)[number];
/** Ticks per second the writes are spread over (each stream is written in one tick of each round). */
const TICKS = 100;

interface Measured {
  events: number;
  user_us: number;
  system_us: number;
}

/** The reader: connects every stream and reads until told to stop. */
async function read(port: number): Promise<void> {
  let bytes = 0;
  for (let index = 0; index < streams; index++) {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET /stream HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n'),
    );
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
  }
  process.on('message', () => {
    process.send!(bytes, () => process.exit(0));
  });
}

/** The server: one variant, measured over `seconds` once every stream is open. */
async function serve(variant: Variant): Promise<Measured> {
  const open: ServerResponse[] = [];
  const server = createServer((_request, response) => {
    if (variant === 'writeSseEvent') {
      startSseResponse(response, { ...SSE_HEADERS }, encodeSseRetry(3000));
    } else {
      response.writeHead(200, SSE_HEADERS);
      response.write(encodeSseRetry(3000));
    }
    open.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const reader = fork(process.argv[1]!, [
    '--role',
    'reader',
    '--port',
    String((server.address() as AddressInfo).port),
    '--streams',
    String(streams),
  ]);
  while (open.length < streams) await sleep(20);
  const runId = '0b5c6f2e-8a51-4c1a-9a0e-7f6a2d7b9c11';
  const write =
    variant === 'writeSseEvent'
      ? writeSseEvent
      : (response: ServerResponse, text: string) => response.write(text);
  let seq = 0;
  let events = 0;
  const tick = () => {
    // Each tick writes its slice of the streams one event each, a frame as the relay encodes it.
    const text = encodeSseFrame(frame('text', runId, { agent: 'writer', content: '雨' }), ++seq);
    const slice = seq % TICKS;
    for (let index = slice; index < open.length; index += TICKS) {
      write(open[index]!, text);
      events++;
    }
  };
  const interval = setInterval(() => {
    for (let repeat = 0; repeat < rate; repeat++) tick();
  }, 1000 / TICKS);
  await sleep(1000);
  events = 0;
  const before = process.cpuUsage();
  await sleep(seconds * 1000);
  const used = process.cpuUsage(before);
  const written = events;
  clearInterval(interval);
  await new Promise<void>((resolve) => {
    reader.once('message', () => resolve());
    reader.send('stop');
  });
  for (const response of open) response.destroy();
  server.close();
  return { events: written, user_us: used.user / written, system_us: used.system / written };
}

if (values.role === 'reader') {
  await read(Number(values.port));
} else if (values.role === 'server') {
  const measured = await serve(values.variant as Variant);
  console.log(JSON.stringify(measured));
  process.exit(0);
} else {
  const rounds = Number(values.rounds);
  const results = new Map<Variant, Measured[]>(VARIANTS.map((variant) => [variant, []]));
  const loads: number[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const variant of VARIANTS) {
      loads.push(loadAverage());
      const output = execFileSync(
        process.execPath,
        [
          process.argv[1]!,
          '--role',
          'server',
          '--variant',
          variant,
          ...['--streams', String(streams), '--rate', String(rate), '--seconds', String(seconds)],
        ],
        { encoding: 'utf8' },
      );
      results.get(variant)!.push(JSON.parse(output.trim().split('\n').at(-1)!) as Measured);
    }
  }
  const median = (variant: Variant, key: keyof Measured) =>
    rounded(distribution(results.get(variant)!.map((measured) => measured[key])).p50);
  console.log(
    `SSE event writes: ${streams} streams, each ${rate} events/s, ${seconds} s per round, ${rounds} rounds alternated; server CPU per event written (median round), load average ${Math.min(...loads)}–${Math.max(...loads)}`,
  );
  console.log(
    table([
      ['write', 'user µs', 'system µs', 'total µs', 'rounds (total µs)'],
      ...VARIANTS.map((variant) => [
        variant,
        String(median(variant, 'user_us')),
        String(median(variant, 'system_us')),
        String(rounded(distribution(results.get(variant)!.map((m) => m.user_us + m.system_us)).p50)),
        results
          .get(variant)!
          .map((m) => rounded(m.user_us + m.system_us))
          .join(' / '),
      ]),
    ]),
  );
  console.log(
    JSON.stringify({
      bench: 'sse-write',
      streams,
      rate,
      seconds,
      rounds,
      load_average: { min: Math.min(...loads), max: Math.max(...loads) },
      variants: Object.fromEntries(
        VARIANTS.map((variant) => [
          variant,
          {
            user_us: median(variant, 'user_us'),
            system_us: median(variant, 'system_us'),
            runs: results.get(variant),
          },
        ]),
      ),
    }),
  );
}

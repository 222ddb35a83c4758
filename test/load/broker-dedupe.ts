/**
 * What the EVENTS stream's duplicate detection costs nats-server per streamed frame. Every frame a
 * worker publishes carries a `Nats-Msg-Id` (a frame whose ack was lost is sent again and stored
 * once), and JetStream remembers each id for the stream's duplicate window (20 minutes: the run
 * wall clock plus a margin, so a takeover's republished frames are stored once too). The server
 * therefore holds one entry per frame of the last 20 minutes.
 *
 * Each variant gets a nats-server of its own, the streams as the services create them
 * (`ensureStreams`), and text frames paced at `--rate` a second over `--runs` run subjects for
 * `--seconds`, each a core publish through Quill's ack inbox (`createAckedPublisher`, what a
 * worker's frames go through) with the frame's `Nats-Msg-Id` (`msgIds.frame`) and, as a worker
 * sends them, no trace header. The variants differ only in that: the shipped stream; the same
 * frames without the id (what the id costs); the shipped frames into a stream whose window is
 * `--short-window-s` (what a bounded window holds); the shipped frames with a `traceparent` as
 * well, as workers sent them before (what the header costs); the frames with no header block at
 * all (a `PUB`, not an `HPUB`: what any header costs, the id being a streamed frame's only one);
 * the same id under a header JetStream does not read (`own header`: what carrying the id costs,
 * without the window remembering it); each run's frames one at a time, each stored only if the
 * run's subject still ends at the previous one (`expected last`, the
 * `Nats-Expected-Last-Subject-Sequence` header: a re-sent frame is refused instead of stored twice,
 * with nothing remembered; docs/decisions/0047).
 * With `--live` one core subscriber per run reads its republished frames (`run.<id>.live`), as
 * the gateways do, so the server's CPU includes carrying each frame's headers to a reader.
 * Prints, per variant, the bytes the stream stores per frame (its own count),
 * the server's CPU per frame and its RSS growth per frame; the growth more
 * than the variant without ids is what the remembered ids hold, and times the rate and the
 * window it is what they hold once the window is full (the server's store and caches, which the
 * variant without ids shows, are not in it). The first `--warmup-s` seconds are not measured.
 *
 *   node test/load/broker-dedupe.ts [--rate 6000] [--runs 300] [--seconds 40] [--warmup-s 5] [--short-window-s 120]
 *     [--variants 'no msg id,shipped,short window,traceparent,no headers,own header,expected last'] [--live]
 *     (the ids' column needs 'no msg id')
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { PubHeaders } from '@nats-io/jetstream';
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { type Bus, connectBus, createAckedPublisher, ensureStreams } from '@quill/bus';
import { loadConfig } from '@quill/config';
import { EventEnvelope, frame, msgIds } from '@quill/contracts';
import { type PrivateNats, startPrivateNats } from './support/private-nats.ts';
import { cpuMs, loadAverage, rssKb } from './support/proc.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '6000' },
    runs: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '40' },
    'warmup-s': { type: 'string', default: '5' },
    'short-window-s': { type: 'string', default: '120' },
    variants: { type: 'string', default: 'no msg id,shipped,short window,traceparent,no headers' },
    live: { type: 'boolean', default: false },
  },
});
const rate = Number(values.rate);
const runCount = Number(values.runs);
const seconds = Number(values.seconds);
const warmupS = Number(values['warmup-s']);
const shortWindowS = Number(values['short-window-s']);
/** What the services create the streams with by default (libs/config). */
const STREAM_SETTINGS = loadConfig({ env: {}, dotenv: {} }).derived.streams;
const TICKS_PER_SECOND = 100;

type Variant =
  | 'shipped'
  | 'no msg id'
  | 'short window'
  | 'traceparent'
  | 'no headers'
  | 'expected last'
  | 'own header';

/** Variants whose frames carry an id the stream remembers for its duplicate window. */
const remembersIds = (variant: Variant) =>
  !['no msg id', 'no headers', 'expected last', 'own header'].includes(variant);

async function windowSeconds(bus: Bus): Promise<number> {
  const info = await bus.jsm.streams.info(bus.names.streams.events);
  return info.config.duplicate_window / 1e9;
}

async function runVariant(variant: Variant) {
  const nats: PrivateNats = await startPrivateNats();
  const bus = await connectBus({ url: nats.url, namespace: 'bench', name: `broker-dedupe ${variant}` });
  try {
    await ensureStreams(bus, STREAM_SETTINGS);
    if (variant === 'short window') {
      const name = bus.names.streams.events;
      const { config } = await bus.jsm.streams.info(name);
      await bus.jsm.streams.update(name, { ...config, duplicate_window: shortWindowS * 1e9 });
    }
    const window = await windowSeconds(bus);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // What each run publishes is made once: the client's time goes to publishing, not building.
    const runs = Array.from({ length: runCount }, () => {
      const runId = randomUUID();
      const envelope = EventEnvelope.parse({
        v: 1,
        frame: frame('text', runId, { agent: 'writer', content: '雨' }),
      });
      return {
        subject: bus.names.events(runId),
        live: bus.names.live(runId),
        payload: new TextEncoder().encode(JSON.stringify(envelope)),
        frameId: msgIds.frameIds(runId, 1, 1),
        /** 'expected last': the sequence of the run's newest stored frame. */
        lastSeq: 0,
        /** 'expected last': the run's publish not answered yet; the next one goes after it. */
        previous: Promise.resolve() as Promise<unknown>,
      };
    });
    const readers = values.live
      ? runs.map((run) => bus.connection.subscribe(run.live, { callback: () => undefined }))
      : [];
    await bus.connection.flush();
    const publisher = createAckedPublisher(bus.connection, { timeoutMs: 10_000 });
    const inFlight = new Set<Promise<unknown>>();
    let sent = 0;
    const send = (index: number) => {
      const run = runs[index % runs.length]!;
      let h: MsgHdrs | undefined;
      if (variant === 'expected last') {
        // Stored only while the subject's newest message is the run's previous frame: a re-sent
        // frame cannot be stored twice, with no id to remember. One frame of a run at a time.
        const published = run.previous.then(() => {
          const expecting = headers();
          expecting.set(PubHeaders.ExpectedLastSubjectSequenceHdr, String(run.lastSeq));
          return publisher.publish(run.subject, run.payload, expecting).then((ack) => {
            run.lastSeq = ack.seq;
          });
        });
        run.previous = published;
        inFlight.add(published);
        void published.finally(() => inFlight.delete(published));
        return;
      }
      if (variant !== 'no headers') {
        h = headers();
        if (variant === 'traceparent') h.set('traceparent', traceparent);
        // The same id under a name JetStream does not read: what carrying it costs without the window.
        if (variant === 'own header') h.set('Quill-Frame', run.frameId(Math.floor(index / runs.length)));
        else if (variant !== 'no msg id')
          h.set(PubHeaders.MsgIdHdr, run.frameId(Math.floor(index / runs.length)));
      }
      const published = publisher.publish(run.subject, run.payload, h);
      inFlight.add(published);
      void published.finally(() => inFlight.delete(published));
    };
    const startedAt = performance.now();
    const perTick = rate / TICKS_PER_SECOND;
    let measuredFrom: { cpu: number; rss: number; sent: number } | undefined;
    for (let tick = 0; tick < (warmupS + seconds) * TICKS_PER_SECOND; tick++) {
      if (!measuredFrom && tick === warmupS * TICKS_PER_SECOND) {
        await Promise.all(inFlight);
        measuredFrom = { cpu: cpuMs(nats.pid), rss: rssKb(nats.pid), sent };
      }
      for (let index = 0; index < perTick; index++) send(sent++);
      const wait = startedAt + ((tick + 1) * 1000) / TICKS_PER_SECOND - performance.now();
      await sleep(Math.max(0, wait));
    }
    await Promise.all(inFlight);
    for (const reader of readers) reader.unsubscribe();
    const frames = sent - measuredFrom!.sent;
    const cpu = cpuMs(nats.pid) - measuredFrom!.cpu;
    const growthKb = rssKb(nats.pid) - measuredFrom!.rss;
    const { state } = await bus.jsm.streams.info(bus.names.streams.events);
    return {
      variant,
      duplicate_window_s: remembersIds(variant) ? window : 0,
      frames,
      stored_bytes_per_frame: state.bytes / state.messages,
      nats_cpu_us_per_frame: (cpu * 1000) / frames,
      rss_growth_mb: growthKb / 1024,
      rss_bytes_per_frame: (growthKb * 1024) / frames,
    };
  } finally {
    await bus.close();
    await nats.stop();
  }
}

const load = loadAverage();
const measured = [];
for (const variant of values.variants.split(',') as Variant[]) measured.push(await runVariant(variant));
const baseline = measured.find((row) => row.variant === 'no msg id')?.rss_bytes_per_frame ?? Number.NaN;
const results = measured.map((row) => {
  // The traceparent variant's growth holds its headers too: not the ids' alone.
  const idBytes =
    !remembersIds(row.variant) || row.variant === 'traceparent'
      ? Number.NaN
      : row.rss_bytes_per_frame - baseline;
  return {
    ...row,
    id_bytes_per_frame: idBytes,
    // Once the window is full the remembered ids hold about this much.
    ids_at_full_window_mb: (idBytes * rate * row.duplicate_window_s) / (1024 * 1024),
  };
});
const shown = (value: number) => (Number.isNaN(value) ? '—' : rounded(value).toString());

console.log(
  `broker-dedupe: ${rate} frames/s over ${runCount} runs for ${seconds} s per variant, a nats-server each${values.live ? ', a live reader per run' : ''} (load ${load}→${loadAverage()})`,
);
console.log(
  table([
    [
      'variant',
      'window s',
      'frames',
      'stored B/frame',
      'nats µs/frame',
      'RSS growth MB',
      'RSS B/frame',
      'ids B/frame',
      'ids at full window MB',
    ],
    ...results.map((row) => [
      row.variant,
      String(row.duplicate_window_s),
      String(row.frames),
      shown(row.stored_bytes_per_frame),
      shown(row.nats_cpu_us_per_frame),
      shown(row.rss_growth_mb),
      shown(row.rss_bytes_per_frame),
      shown(row.id_bytes_per_frame),
      shown(row.ids_at_full_window_mb),
    ]),
  ]),
);
console.log(
  JSON.stringify({
    bench: 'broker-dedupe',
    rate,
    runs: runCount,
    seconds,
    live: values.live,
    load_average: load,
    variants: results.map((row) => ({
      ...row,
      stored_bytes_per_frame: rounded(row.stored_bytes_per_frame),
      nats_cpu_us_per_frame: rounded(row.nats_cpu_us_per_frame),
      rss_growth_mb: rounded(row.rss_growth_mb),
      rss_bytes_per_frame: rounded(row.rss_bytes_per_frame),
      id_bytes_per_frame: Number.isNaN(row.id_bytes_per_frame) ? null : rounded(row.id_bytes_per_frame),
      ids_at_full_window_mb: Number.isNaN(row.ids_at_full_window_mb)
        ? null
        : rounded(row.ids_at_full_window_mb),
    })),
  }),
);

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BusNames, busNames, msgIds } from '../src/index.ts';

/**
 * Whether some concrete subject matches both NATS patterns (`*` = one token, `>` = one or more
 * trailing tokens). JetStream refuses streams whose subjects overlap, and a core request on a
 * subject a stream captures gets a PubAck instead of its reply.
 */
function subjectsOverlap(left: string, right: string): boolean {
  const a = left.split('.');
  const b = right.split('.');
  for (let index = 0; ; index++) {
    const x = a[index];
    const y = b[index];
    if (x === '>') return b.length > index;
    if (y === '>') return a.length > index;
    if (x === undefined || y === undefined) return x === y;
    if (x !== y && x !== '*' && y !== '*') return false;
  }
}

function streamSubjects(names: BusNames): Record<string, readonly string[]> {
  return {
    runs: [names.runStartAll],
    tasks: [names.taskEverything],
    events: names.eventSubjects,
  };
}

/** Subjects that must stay core NATS (request/reply and broadcasts), never captured by a stream. */
function coreSubjects(names: BusNames): string[] {
  return [
    names.control('*'),
    // EVENTS republishes here: a stream capturing it would store every frame twice.
    names.live('*'),
    names.contextCompile,
    names.billingReserve,
    names.billingSettle,
    names.billingBalance,
    names.billingGrant,
    names.routerRunOpen,
    names.routerRunEnd,
    names.health('*'),
  ];
}

describe('subjectsOverlap', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.b', 'a.c', false],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a', false],
    ['a.>', 'a.b.c', true],
    ['a.>', '*.*', true],
    ['>', 'x', true],
    ['a.*.c', '*.b.*', true],
    ['a.*.c', '*.b.d', false],
    // The collision the RUNS subject was renamed to avoid: run.start.events matches both.
    ['run.start.*', 'run.*.events', true],
  ] as const)('%s vs %s → %s', (left, right, expected) => {
    expect(subjectsOverlap(left, right)).toBe(expected);
    expect(subjectsOverlap(right, left)).toBe(expected);
  });
});

describe.each(['', 'ns1', 'b_x9'])('busNames(%j)', (namespace) => {
  const names = busNames(namespace);
  const prefix = namespace ? `${namespace}.` : '';

  it('prefixes every subject and names streams and consumers', () => {
    expect(names.namespace).toBe(namespace);
    const upper = namespace ? `${namespace.toUpperCase()}_` : '';
    expect(names.streams).toEqual({ runs: `${upper}RUNS`, tasks: `${upper}TASKS`, events: `${upper}EVENTS` });
    const lower = namespace ? `${namespace}_` : '';
    expect(names.consumers.router).toBe(`${lower}router`);
    expect(names.consumers.billingUsage).toBe(`${lower}billing_usage`);
    expect(names.consumers.role('writer')).toBe(`${lower}role_writer`);

    expect(names.runStart('r1')).toBe(`${prefix}runs.start.r1`);
    expect(names.runStartAll).toBe(`${prefix}runs.start.*`);
    expect(names.task('writer', 'r1')).toBe(`${prefix}task.writer.r1`);
    expect(names.live('r1')).toBe(`${prefix}run.r1.live`);
    expect(names.liveMapping).toBe(`${prefix}run.{{wildcard(1)}}.live`);
    expect(names.taskAll('writer')).toBe(`${prefix}task.writer.>`);
    expect(names.taskEverything).toBe(`${prefix}task.>`);
    expect(names.events('r1')).toBe(`${prefix}run.r1.events`);
    expect(names.steps('r1')).toBe(`${prefix}run.r1.steps`);
    expect(names.usage('r1')).toBe(`${prefix}run.r1.usage`);
    expect(names.usageAll).toBe(`${prefix}run.*.usage`);
    expect(names.control('r1')).toBe(`${prefix}run.r1.control`);
    expect(names.contextCompile).toBe(`${prefix}context.compile`);
    expect(names.billingReserve).toBe(`${prefix}billing.reserve`);
    expect(names.billingSettle).toBe(`${prefix}billing.settle`);
    expect(names.billingBalance).toBe(`${prefix}billing.balance`);
    expect(names.billingGrant).toBe(`${prefix}billing.grant`);
    expect(names.routerRunOpen).toBe(`${prefix}router.runs.open`);
    expect(names.routerRunEnd).toBe(`${prefix}router.runs.end`);
    expect(names.health('router')).toBe(`${prefix}health.router`);
  });

  it('each concrete subject falls under the pattern that collects it', () => {
    expect(subjectsOverlap(names.runStart('r1'), names.runStartAll)).toBe(true);
    expect(subjectsOverlap(names.task('writer', 'r1'), names.taskAll('writer'))).toBe(true);
    expect(subjectsOverlap(names.task('writer', 'r1'), names.taskEverything)).toBe(true);
    expect(subjectsOverlap(names.task('planner', 'r1'), names.taskAll('writer'))).toBe(false);
    // The blank files of an ended run ride the writer's queue (and its lag), no one else's.
    expect(subjectsOverlap(names.blankFiles('r1'), names.taskAll('writer'))).toBe(true);
    expect(subjectsOverlap(names.blankFiles('r1'), names.taskAll('quality_reviewer'))).toBe(false);
    expect(subjectsOverlap(names.usage('r1'), names.usageAll)).toBe(true);
    for (const subject of [names.events('r1'), names.steps('r1'), names.usage('r1')]) {
      expect(names.eventSubjects.some((pattern) => subjectsOverlap(subject, pattern))).toBe(true);
    }
  });

  it('RUNS, TASKS and EVENTS subjects never overlap', () => {
    const streams = Object.entries(streamSubjects(names));
    for (const [leftStream, leftSubjects] of streams) {
      for (const [rightStream, rightSubjects] of streams) {
        if (leftStream === rightStream) continue;
        for (const left of leftSubjects) {
          for (const right of rightSubjects) {
            expect(subjectsOverlap(left, right), `${leftStream} ${left} vs ${rightStream} ${right}`).toBe(
              false,
            );
          }
        }
      }
    }
    // Nor do the EVENTS subjects among themselves (each run subject kind is read on its own).
    const [events, steps, usage] = names.eventSubjects as [string, string, string];
    expect([events, steps, usage].map((subject) => subjectsOverlap(events, subject))).toEqual([
      true,
      false,
      false,
    ]);
    expect(subjectsOverlap(steps, usage)).toBe(false);
  });

  it('core subjects are captured by no stream', () => {
    const patterns = Object.values(streamSubjects(names)).flat();
    for (const subject of coreSubjects(names)) {
      for (const pattern of patterns)
        expect(subjectsOverlap(subject, pattern), `${subject} vs ${pattern}`).toBe(false);
    }
  });

  it('run-start subjects of an id that equals a subject keyword stay in RUNS only', () => {
    for (const runId of ['start', 'events', 'steps', 'usage', 'control']) {
      const subject = names.runStart(runId);
      expect(names.eventSubjects.some((pattern) => subjectsOverlap(subject, pattern))).toBe(false);
    }
  });
});

describe('namespaces', () => {
  it('two namespaces share no subject', () => {
    const first = busNames('alpha');
    const second = busNames('beta');
    const all = (names: BusNames) => [...Object.values(streamSubjects(names)).flat(), ...coreSubjects(names)];
    for (const left of all(first)) {
      for (const right of all(second))
        expect(subjectsOverlap(left, right), `${left} vs ${right}`).toBe(false);
    }
  });

  it.each(['UPPER', 'has.dot', 'has-dash', 'has space', 'x'.repeat(33), '>', '*'])(
    'rejects %j',
    (namespace) => {
      expect(() => busNames(namespace)).toThrow(/bus namespace/);
    },
  );

  it('accepts the longest allowed namespace', () => {
    expect(busNames('x'.repeat(32)).namespace).toBe('x'.repeat(32));
  });
});

describe('msgIds', () => {
  const runId = '5d0f6a2e-7d4c-4d8e-9a41-0c2b7f3e1a90';

  it('are stable strings for the same inputs', () => {
    const build = () => [
      msgIds.runStart(runId),
      msgIds.runStarted(runId),
      msgIds.terminal(runId),
      msgIds.done(runId),
      msgIds.refund(runId),
      msgIds.task(runId, 3),
      msgIds.dispatched(runId, 3),
      msgIds.stepResult(runId, 3),
      msgIds.frame(runId, 3, 1, 7),
      msgIds.usage(runId, 2, 0),
    ];
    expect(build()).toEqual(build());
    expect(build()).toEqual([
      `${runId}:start`,
      `${runId}:run_started`,
      `${runId}:terminal`,
      `${runId}:done`,
      `${runId}:quota_refunded`,
      `${runId}:step:3:task`,
      `${runId}:step:3:dispatched`,
      `${runId}:step:3:result`,
      'XQ9qLn1MTY6aQQwrfz4akA.3.1.7',
      `${runId}:usage:2:0`,
    ]);
    // Distinct kinds never share an id, so one cannot swallow another in the duplicate window.
    expect(new Set(build()).size).toBe(build().length);
  });

  it('name a UUID run in a frame id by its 16 bytes in base64url, any UUID, either case', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.boolean(), fc.nat(50), fc.nat(5), (uuid, upper, step, attempt) => {
        const runId = upper ? uuid.toUpperCase() : uuid;
        const bytes = Buffer.from(uuid.replaceAll('-', ''), 'hex').toString('base64url');
        expect(msgIds.frame(runId, step, attempt, 0)).toBe(`${bytes}.${step}.${attempt}.0`);
        expect(msgIds.frameIds(runId, step, attempt)(7)).toBe(msgIds.frame(runId, step, attempt, 7));
        // No other kind of id can equal a frame's: theirs all contain a colon.
        expect(msgIds.frame(runId, step, attempt, 0)).not.toContain(':');
      }),
    );
  });

  it('differ by step, attempt and index', () => {
    const ids = new Set<string>();
    for (let step = 0; step < 3; step++) {
      for (let attempt = 0; attempt < 3; attempt++) {
        for (let index = 0; index < 12; index++) ids.add(msgIds.frame(runId, step, attempt, index));
      }
    }
    expect(ids.size).toBe(3 * 3 * 12);
    expect(msgIds.frame('other-run', 1, 1, 7)).toBe('other-run:.1.1.7');
    expect(msgIds.task(runId, 1)).not.toBe(msgIds.task('other-run', 1));
    expect(msgIds.usage(runId, 1, 0)).not.toBe(msgIds.usage(runId, 1, 1));
  });
});

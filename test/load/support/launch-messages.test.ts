import { randomUUID } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { testUrls, uniqueName } from '../../support/urls.ts';
import { messageKind, sniffMessages } from './launch-messages.ts';

const run = '0b6f1f6e-5a7d-4d43-9a39-2b1f3c4d5e6f';
const ns = 'tmxq1';

describe('the kinds of a launch’s NATS messages', () => {
  it('names each from its subject and reply, without run ids, namespace or inbox ids', () => {
    const cases: Array<[string, string | undefined, string]> = [
      [`${ns}.run.${run}.events`, '_INBOX.abc.1', 'JetStream publish run.<id>.events'],
      [`${ns}.run.${run}.steps`, '_INBOX.abc.2', 'JetStream publish run.<id>.steps'],
      [`${ns}.runs.start.${run}`, '_INBOX.abc.3', 'JetStream publish runs.start.<id>'],
      [`${ns}.task.writer.${run}`, '_INBOX.abc.4', 'JetStream publish task.writer.<id>'],
      [`${ns}.billing.settle`, '_INBOX.abc.5', 'request billing.settle'],
      [`${ns}.run.${run}.live`, undefined, 'republished run.<id>.live'],
      [`${ns}.run.${run}.control`, undefined, 'publish run.<id>.control'],
      [
        `${ns}.runs.start.${run}`,
        `$JS.ACK.${ns.toUpperCase()}_RUNS.${ns}_router.1.41.41.1796567513661728420.0`,
        'JetStream delivery runs.start.<id>',
      ],
      [
        `$JS.API.STREAM.MSG.GET.${ns.toUpperCase()}_EVENTS`,
        '_INBOX.x.1',
        'JetStream API STREAM.MSG.GET EVENTS',
      ],
      [
        `$JS.API.DIRECT.GET.${ns.toUpperCase()}_EVENTS.${ns}.run.${run}.events`,
        '_INBOX.x.2',
        'JetStream API DIRECT.GET EVENTS',
      ],
      [
        `$JS.API.CONSUMER.CREATE.${ns.toUpperCase()}_EVENTS`,
        '_INBOX.x.3',
        'JetStream API CONSUMER.CREATE EVENTS',
      ],
      [
        `$JS.API.CONSUMER.DELETE.${ns.toUpperCase()}_EVENTS.NaGI51qC`,
        '_INBOX.x.4',
        'JetStream API CONSUMER.DELETE EVENTS',
      ],
      [
        `$JS.API.CONSUMER.MSG.NEXT.${ns.toUpperCase()}_TASKS.${ns}_role_writer`,
        '_INBOX.x.5',
        'JetStream API CONSUMER.MSG.NEXT TASKS',
      ],
      [
        `$JS.ACK.${ns.toUpperCase()}_TASKS.${ns}_role_writer.1.41.41.1796567513676914893.0`,
        '_INBOX.y.1',
        'JetStream ack (confirmed) TASKS',
      ],
      [
        `$JS.ACK.${ns.toUpperCase()}_EVENTS.NaGI51qC.1.441.1.1796567513660`,
        undefined,
        'JetStream ack EVENTS',
      ],
      ['$JS.EVENT.ADVISORY.API', undefined, 'advisory API'],
      [
        `$JS.EVENT.ADVISORY.CONSUMER.CREATED.${ns.toUpperCase()}_EVENTS.NaGI51qC`,
        undefined,
        'advisory CONSUMER.CREATED',
      ],
      ['_INBOX.YKrNo3q9YvnyUcera9UZpM.GGw6cr7r', undefined, 'answer or status to an inbox'],
    ];
    for (const [subject, reply, kind] of cases) expect(messageKind(subject, reply, ns), subject).toBe(kind);
    // No namespace: subjects are taken as they are.
    expect(messageKind(`run.${run}.events`, '_INBOX.z', '')).toBe('JetStream publish run.<id>.events');
    expect(messageKind('$JS.API.STREAM.MSG.GET.EVENTS', '_INBOX.z', '')).toBe(
      'JetStream API STREAM.MSG.GET EVENTS',
    );
  });

  it('counts what the server routes, per launch, over a real nats-server', async () => {
    const namespace = uniqueName('sniff');
    const sniffer = await sniffMessages(testUrls.nats, namespace);
    const connection = await connect({ servers: testUrls.nats });
    const stream = `${namespace.toUpperCase()}_EVENTS`;
    const manager = await jetstreamManager(connection);
    try {
      await manager.streams.add({ name: stream, subjects: [`${namespace}.run.*.events`] });
      const client = jetstream(connection);
      for (let index = 0; index < 4; index++)
        await client.publish(`${namespace}.run.${randomUUID()}.events`, 'frame');
      connection.publish(`${namespace}.run.${randomUUID()}.control`, 'stop');
      await connection.flush();
      const kinds = await sniffer.stop(2);
      const perLaunch = (kind: string) => kinds.find((row) => row.kind === kind)?.perLaunch;
      expect(perLaunch('JetStream publish run.<id>.events')).toBe(2);
      expect(perLaunch('publish run.<id>.control')).toBe(0.5);
      // Each publish was acknowledged to an inbox.
      expect(perLaunch('answer or status to an inbox')).toBeGreaterThanOrEqual(2);
      expect(kinds.map((row) => row.perLaunch)).toEqual(
        [...kinds.map((row) => row.perLaunch)].sort((a, b) => b - a),
      );
    } finally {
      await manager.streams.delete(stream).catch(() => undefined);
      await connection.close();
    }
  });
});

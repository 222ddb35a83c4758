import { connect, type NatsConnection } from '@nats-io/transport-node';
import { rounded } from './stats.ts';

/**
 * What a launch's NATS messages are, one by one. `/connz` counts each service's messages; a
 * subscriber on `>` on the benchmark's own nats-server sees what they are: every message the
 * server routes, whoever sent it, including its own (JetStream acks and deliveries, republished
 * frames, the answers of its API, advisories). `launch-path.ts --messages` prints them per launch
 * by kind, so a change to the launch shows which messages went, not only how many
 * (docs/decisions/0064-a-launch-reads-back-nothing-it-knows.md).
 *
 * The subscriber costs the server a copy of every message. So its CPU in such a run is not the
 * launch's, and the advisories are counted because someone listens.
 */

const RUN_ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** Subjects stored by a stream (a publish with a reply there is a JetStream publish). */
const STORED = /^(run\.<id>\.(events|steps|usage)|runs\.start\.<id>|task\..+)$/;

/**
 * The kind of one message, from its subject and reply subject: run ids become `<id>`, the bus
 * namespace goes, a stream's name loses its namespace prefix, and JetStream's own subjects are
 * named by what they do. Pure, so its naming is tested apart.
 */
export function messageKind(subject: string, reply: string | undefined, namespace: string): string {
  const prefix = namespace ? `${namespace}.` : '';
  const streamPrefix = namespace ? `${namespace.toUpperCase()}_` : '';
  const streamName = (name = '?') => (name.startsWith(streamPrefix) ? name.slice(streamPrefix.length) : name);
  const tokens = subject.split('.');
  if (subject.startsWith('$JS.API.')) {
    // $JS.API.STREAM.MSG.GET.<stream>, $JS.API.CONSUMER.CREATE.<stream>[.…], $JS.API.DIRECT.GET.<stream>[.…]
    const [, , group, action, ...rest] = tokens;
    const verb = action === 'MSG' ? `${action}.${rest.shift()}` : action;
    return `JetStream API ${group}.${verb} ${streamName(rest[0])}`;
  }
  if (subject.startsWith('$JS.ACK.')) {
    return `JetStream ack${reply ? ' (confirmed)' : ''} ${streamName(tokens[2])}`;
  }
  if (subject.startsWith('$JS.EVENT.ADVISORY.')) {
    const [, , , kind, detail] = tokens;
    return `advisory ${kind === 'CONSUMER' || kind === 'STREAM' ? `${kind}.${detail}` : kind}`;
  }
  if (subject.startsWith('_INBOX.')) return 'answer or status to an inbox';
  const local = (subject.startsWith(prefix) ? subject.slice(prefix.length) : subject).replace(RUN_ID, '<id>');
  if (reply?.startsWith('$JS.ACK.')) return `JetStream delivery ${local}`;
  if (local.endsWith('.live')) return `republished ${local}`;
  if (!reply) return `publish ${local}`;
  return STORED.test(local) ? `JetStream publish ${local}` : `request ${local}`;
}

export interface MessageSniffer {
  /** Stops listening; the messages of each kind per launch, most first. */
  stop(launches: number): Promise<Array<{ kind: string; perLaunch: number }>>;
}

/** Counts every message the server routes, by kind, until `stop`. */
export async function sniffMessages(url: string, namespace: string): Promise<MessageSniffer> {
  const connection: NatsConnection = await connect({ servers: url, name: 'bench-sniffer' });
  const counts = new Map<string, number>();
  const subscription = connection.subscribe('>', {
    callback: (_error, message) => {
      // The server's own account traffic and this connection's are not the launches'.
      if (message.subject.startsWith('$SYS.')) return;
      const kind = messageKind(message.subject, message.reply, namespace);
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    },
  });
  await connection.flush();
  return {
    async stop(launches) {
      await connection.flush();
      subscription.unsubscribe();
      await connection.close();
      return [...counts]
        .map(([kind, count]) => ({ kind, perLaunch: rounded(count / launches) }))
        .sort((a, b) => b.perLaunch - a.perLaunch || a.kind.localeCompare(b.kind));
    },
  };
}

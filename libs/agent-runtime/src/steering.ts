import { type AgentRole, type ChatMessage, frame } from '@quill/contracts';
import { drainSteer, type RedisClient, type RedisKeys } from '@quill/redis';
import { quillMetrics } from '@quill/telemetry';
import type { StepEmitter } from './frame-emitter.ts';

/**
 * Author interjections queued with `/agent/steer` are drained at model-call boundaries: each
 * becomes a user message in the conversation and a `steering_received` frame. Draining is
 * atomic, so an interjection is delivered to exactly one call, and one that arrives between two
 * steps waits in Redis for the next step's first call.
 */
export async function drainSteering(
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
  messages: ChatMessage[],
  emitter: StepEmitter,
  _agent: AgentRole,
): Promise<number> {
  const pending = await drainSteer(redis, keys.steer(runId));
  for (const text of pending) {
    messages.push({ role: 'user', content: `[作者插话] ${text}` });
    emitter.emit(frame('steering_received', runId, { content: text }));
  }
  if (pending.length > 0) quillMetrics().steeringMessages.add(pending.length, { stage: 'delivered' });
  return pending.length;
}

import { drainSteer, type RedisClient, type RedisKeys } from '@quill/redis';
import { quillMetrics } from '@quill/telemetry';

/**
 * Author interjections queued with `/agent/steer` are drained at model-call boundaries; the step
 * machine turns each into a user message and a `steering_received` frame. Draining is atomic, so
 * an interjection is delivered to exactly one call, and one that arrives between two steps waits
 * in Redis for the next step's first call.
 */
export async function drainSteering(redis: RedisClient, keys: RedisKeys, runId: string): Promise<string[]> {
  const pending = await drainSteer(redis, keys.steer(runId));
  if (pending.length > 0) quillMetrics().steeringMessages.add(pending.length, { stage: 'delivered' });
  return pending;
}

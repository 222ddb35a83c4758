export type { Redis as RedisClient } from 'ioredis';
export { createRedis } from './client.ts';
export { type RedisKeys, redisKeys } from './keys.ts';
export { defineLuaScript } from './lua-script.ts';
export { type RunHold, renewRunHolds } from './run-holds.ts';
export {
  claimExpiredRunLeases,
  holdRunLease,
  releaseRunLease,
  renewRunLeases,
} from './run-lease.ts';
export { getStopFlag, openModelTurn, pushSteer, setStopFlag } from './run-signals.ts';
export { acquireRunSlots, releaseRunSlots } from './run-slots.ts';
export { acquireSemaphore, countSemaphore, releaseSemaphore } from './semaphore.ts';
export {
  acquireSessionLock,
  getSessionLockHolder,
  releaseSessionLock,
} from './session-lock.ts';

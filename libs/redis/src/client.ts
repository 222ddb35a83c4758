import { Redis } from 'ioredis';

export interface RedisOptions {
  connectionName?: string;
  /**
   * How many reconnects a queued command survives before failing. Small on purpose: a request
   * that waits on a dead Redis should fail fast (503) rather than hang behind a reconnect loop.
   */
  maxRetriesPerRequest?: number;
  /** Connection errors; without a listener ioredis prints them itself. */
  onError?: (error: Error) => void;
}

export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: options.maxRetriesPerRequest ?? 3,
    connectionName: options.connectionName ?? 'quill',
  });
  if (options.onError) redis.on('error', options.onError);
  return redis;
}

/**
 * The test Redis (TABLEGATE_TEST_REDIS_URL, default redis://127.0.0.1:6379; `.ci/run` starts one)
 * and a clean-up that deletes only the keys of one test database: other work may use this Redis.
 */
import { Redis } from 'ioredis';
import { KEY_PREFIX } from '../../src/throttle/redis-counter-store.js';

export function testRedisUrl(): string {
  return process.env.TABLEGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** Deletes every key the gateways of `database` made (never FLUSHALL/FLUSHDB). */
export async function deleteRedisKeys(database: string): Promise<number> {
  const client = new Redis(testRedisUrl());
  try {
    let deleted = 0;
    for await (const keys of client.scanStream({
      match: `${KEY_PREFIX}${database}:*`,
      count: 500,
    })) {
      if ((keys as string[]).length > 0) deleted += await client.del(...(keys as string[]));
    }
    return deleted;
  } finally {
    client.disconnect();
  }
}

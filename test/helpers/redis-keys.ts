import { Redis } from "ioredis";

/**
 * Deletes the keys of `pattern` (a test's own prefix, such as `omniname-test-ab12:*`) from the
 * machine's shared Redis, which then keeps nothing of the test (the monthly quota's counters live a
 * month). Read with SCAN a page at a time. Given a URL, connects for the call and disconnects.
 */
export async function dropRedisKeys(redis: Redis | string, pattern: string): Promise<void> {
  const client =
    typeof redis === "string" ? new Redis(redis, { lazyConnect: true, maxRetriesPerRequest: 1 }) : redis;
  try {
    for await (const keys of client.scanStream({ match: pattern, count: 1_000 }) as AsyncIterable<string[]>)
      if (keys.length > 0) await client.del(...keys);
  } finally {
    if (typeof redis === "string") client.disconnect();
  }
}

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import {
  apiRoleEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../helpers/server-process.js";

const REDIS_URL = "redis://127.0.0.1:6379";
// A month no other test fakes, so that the server's Redis counters (default prefix "omniname")
// are only this test's.
const MONTH = "2031-01";

/** The demo plan with a quota of 5 a month; the rate is no obstacle. */
const PLANS = JSON.stringify({
  free: { rps: 10, monthlyQuota: 100_000, maxProjects: 3, maxKeys: 5, maxMembers: 5 },
  demo: { rps: 1_000, monthlyQuota: 5, maxProjects: 1, maxKeys: 10, maxMembers: 10 },
});

type Server = ServerProcess;

// libfaketime preloaded into node itself (not the `faketime` wrapper, which would stand between
// the test and the server's signals). "@": the clock starts at that time and runs on.
const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
const hasFaketime = existsSync(LIBFAKETIME);

/**
 * The real server process (`omniname start --fixtures`, API role only: no chains needed) with
 * libfaketime (Debian package `faketime`), whose clock starts at `at` and runs on from there.
 */
function startAt(at: string, dataDir: string, redisUrl?: string): Promise<Server> {
  const env = apiRoleEnv(dataDir, {
    DATABASE_URL: "",
    PLANS,
    LD_PRELOAD: LIBFAKETIME,
    FAKETIME: `@${at}`,
    // Timers and timeouts keep the real pace; only the wall clock (Date.now) is moved.
    FAKETIME_DONT_FAKE_MONOTONIC: "1",
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  });
  return startServerProcess(env, ["--fixtures"]);
}

const stop = stopServerProcess;

describe.skipIf(!hasFaketime)("the monthly quota of a running server, under a faked clock (faketime)", () => {
  const dirs: string[] = [];
  const running: Server[] = [];
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const clearMonth = async () => {
    const keys = await redis.keys(`omniname:quota:*:${MONTH}`);
    if (keys.length > 0) await redis.del(...keys);
  };
  afterAll(async () => {
    for (const s of running) if (s.child.exitCode === null) s.child.kill("SIGKILL");
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await clearMonth();
    redis.disconnect();
  });

  it.each([
    ["in memory", `${MONTH}-01 00:00:00`, false],
    ["in memory", `${MONTH}-08 00:00:00`, false],
    ["in Redis", `${MONTH}-01 00:00:00`, true],
  ])(
    "%s, at %s: serves 5 requests of a quota of 5, then QUOTA_EXCEEDED",
    async (_kind, at, useRedis) => {
      if (useRedis) await clearMonth();
      const dataDir = mkdtempSync(join(tmpdir(), "omniname-quota-"));
      dirs.push(dataDir);
      const server = await startAt(at, dataDir, useRedis ? REDIS_URL : undefined);
      running.push(server);
      const key = readFileSync(join(dataDir, "demo-api-key"), "utf8").trim();
      expect(server.output()).toContain("demo limits:    1,000 requests/s per key, 5 a month (plan demo)");
      const resolve = () =>
        fetch(`${server.url}/svc/api/v1/resolve?domain=alice.wallet`, { headers: { "api-key": key } });
      for (let i = 1; i <= 5; i++) {
        const res = await resolve();
        expect(res.status, `request ${i}`).toBe(200);
        expect(res.headers.get("ratelimit"), `request ${i}`).toMatch(new RegExp(`"quota";r=${5 - i};`));
        // Separate requests a moment apart, as a client loop would send them: due timers run between.
        await new Promise((r) => setTimeout(r, 20));
      }
      for (let i = 6; i <= 8; i++) {
        const res = await resolve();
        expect(res.status, `request ${i}`).toBe(429);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("QUOTA_EXCEEDED");
        await new Promise((r) => setTimeout(r, 20));
      }
      if (useRedis) expect((await redis.keys(`omniname:quota:*:${MONTH}`)).length).toBe(1);
      expect(await stop(server)).toBe(0);
      expect(server.output()).not.toMatch(/Warning/);
    },
    90_000,
  );
});

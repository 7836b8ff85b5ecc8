import { Writable } from "node:stream";
import { Redis } from "ioredis";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionFailureOf } from "../../src/domain/connection-failure.js";
import { freePort } from "../helpers/free-port.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

/**
 * A service other than the store that cannot be reached (here Redis, and an HTTP upstream such as a
 * chain's RPC, on a closed 127.0.0.1 port): 503 UPSTREAM_UNAVAILABLE with Retry-After, never a
 * 500, logged once with the address.
 */
describe("an unreachable upstream", () => {
  let t: TestApp;
  let closedPort: number;
  const logs: string[] = [];
  beforeAll(async () => {
    closedPort = await freePort();
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        cb();
      },
    });
    t = await createTestApp({
      logger: pino({ level: "info" }, sink),
      // The process runs with REDIS_URL on the closed port: its limits fall back to memory.
      env: { REDIS_URL: `redis://127.0.0.1:${closedPort}` },
      app: {
        v1Hooks: [
          (scope) => {
            // A path that reads Redis with no fallback of its own.
            scope.get("/needs-redis", async () => {
              const redis = new Redis(`redis://127.0.0.1:${closedPort}`, {
                lazyConnect: true,
                retryStrategy: () => null,
                maxRetriesPerRequest: 0,
              });
              redis.on("error", () => {});
              try {
                await redis.connect();
                return { result: true, data: await redis.get("k") };
              } finally {
                redis.disconnect();
              }
            });
            // An HTTP upstream (fetch, as viem calls a chain's RPC): its TypeError wraps the refusal.
            scope.get("/needs-rpc", async () => {
              const res = await fetch(`http://127.0.0.1:${closedPort}/`, { method: "POST", body: "{}" });
              return { result: true, data: res.status };
            });
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    // ioredis keeps the socket's error to its "error" event: a command fails in its own words.
    ["/needs-redis", "a Redis client", { upstream: "redis" }],
    ["/needs-rpc", "fetch", { upstream: "closed port", syscall: "connect", errno: "ECONNREFUSED" }],
  ])(
    "%s (%s): 503 UPSTREAM_UNAVAILABLE, Retry-After, what it was only in the log",
    async (path, _what, logged) => {
      const before = logs.length;
      const res = await t.get(`${V1}${path}`);
      expect(res.statusCode).toBe(503);
      expect(res.headers["retry-after"]).toBe("1");
      expect(res.json()).toEqual({
        result: false,
        error: {
          code: "UPSTREAM_UNAVAILABLE",
          message: "A service this server depends on cannot be reached; retry shortly.",
        },
      });
      expect(res.body).not.toContain(String(closedPort));
      const lines = logs
        .slice(before)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.code === "UPSTREAM_UNAVAILABLE");
      expect(lines).toHaveLength(1);
      const upstream = logged.upstream === "closed port" ? `127.0.0.1:${closedPort}` : logged.upstream;
      expect(lines[0]).toMatchObject({ level: 50, msg: "upstream unreachable", ...logged, upstream });
    },
  );

  it("keeps answering v1 while the process's Redis is away (its limits count in memory)", async () => {
    expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
  });

  it("finds the refusal in a cause chain and in an AggregateError, and nothing in other errors", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(connectionFailureOf(new TypeError("fetch failed", { cause: refused }))).toBe(refused);
    expect(connectionFailureOf(new AggregateError([new Error("x"), refused]))).toBe(refused);
    expect(connectionFailureOf(new Error("boom"))).toBeNull();
    expect(connectionFailureOf(Object.assign(new Error("gone"), { code: "ENOENT" }))).toBeNull();
  });
});

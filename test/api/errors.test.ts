import { createConsoleServices } from "../../src/accounts/console-services.js";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { AppError } from "../../src/domain/errors.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { storeError } from "../../src/store/kysely/unavailable-dialect.js";
import { createPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { isPgUnavailable } from "../../src/store/postgres/pg-unavailable.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { NOW } from "./helpers/world.js";

const V1 = "/svc/api/v1";

function expectEnvelope(
  res: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(res.statusCode).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  expect(res.json()).toEqual({ result: false, error: { code, message: expect.any(String) } });
}

describe("the error envelope", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      app: {
        v1Hooks: [
          (scope) => {
            scope.get("/boom", async () => {
              throw new Error("secret internal detail at /var/lib/omniname.db");
            });
            scope.get("/typeerror", async () => (null as unknown as { x: number }).x);
            // What the PostgreSQL store throws for a refused connection (its driver's error, read by the backend).
            scope.get("/store-down", async () => {
              throw storeError(
                Object.assign(new Error("connect ECONNREFUSED 10.0.0.7:5432"), { code: "ECONNREFUSED" }),
                isPgUnavailable,
              );
            });
          },
        ],
      },
      beforeReady(app) {
        app.post("/test/echo", async (request) => ({ result: true, data: request.body }));
        app.get("/test/app-error", async () => {
          throw new AppError("RATE_LIMITED", "slow down");
        });
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    "/",
    "/nope",
    "/svc/api/v2/resolve",
    `${V1}/resolv`,
    `${V1}/resolve/extra`,
    "/SVC/API/V1/RESOLVE",
  ])("answers 404 NOT_FOUND for the unknown path %s", async (url) => {
    expectEnvelope(await t.get(url), 404, "NOT_FOUND");
  });

  it.each(["POST", "PUT", "DELETE", "PATCH"] as const)(
    "answers 405 METHOD_NOT_ALLOWED for %s on a GET route",
    async (method) => {
      const res = await t.app.inject({
        method,
        url: `${V1}/resolve?domain=alice.wallet`,
        headers: { "api-key": t.key },
      });
      expectEnvelope(res, 405, "METHOD_NOT_ALLOWED");
      expect(res.headers.allow).toBe("GET, HEAD");
      expectEnvelope(await t.app.inject({ method, url: "/healthz" }), 405, "METHOD_NOT_ALLOWED");
    },
  );

  it("serves HEAD on GET routes", async () => {
    const res = await t.app.inject({
      method: "HEAD",
      url: `${V1}/resolve?domain=alice.wallet`,
      headers: { "api-key": t.key },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe("");
  });

  it("answers 413 PAYLOAD_TOO_LARGE for a body over the limit", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ x: "y".repeat(100_000) }),
    });
    expectEnvelope(res, 413, "PAYLOAD_TOO_LARGE");
  });

  it("answers 415 UNSUPPORTED_MEDIA_TYPE for an unknown content type", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/x-evil" },
      payload: "<x/>",
    });
    expectEnvelope(res, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 400 BAD_REQUEST for a JSON body that does not parse", async () => {
    const res = await t.app.inject({
      method: "POST",
      url: "/test/echo",
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    expectEnvelope(res, 400, "BAD_REQUEST");
  });

  it.each([`${V1}/%E0%A4%A`, "/%zz", `${V1}/resolve%`])(
    "answers 400 BAD_REQUEST for the malformed URL %s",
    async (url) => {
      expectEnvelope(await t.get(url), 400, "BAD_REQUEST");
    },
  );

  it("maps an AppError thrown anywhere to its registry status", async () => {
    const res = await t.get("/test/app-error");
    expectEnvelope(res, 429, "RATE_LIMITED");
    expect(res.json().error.message).toBe("slow down");
  });

  it.each(["/boom", "/typeerror"])(
    "answers %s with 500 INTERNAL_ERROR and no internal detail",
    async (path) => {
      const res = await t.get(`${V1}${path}`);
      expectEnvelope(res, 500, "INTERNAL_ERROR");
      expect(res.body).not.toMatch(/secret|omniname\.db|stack|at |TypeError|Cannot read/);
      expect(res.json().error.message).toBe("Internal error.");
    },
  );

  it("answers 503 STORE_UNAVAILABLE when a store error means the database is unreachable", async () => {
    const res = await t.get(`${V1}/store-down`);
    expectEnvelope(res, 503, "STORE_UNAVAILABLE");
    expect(res.body).not.toContain("10.0.0.7");
    expect(res.headers["retry-after"]).toBe("1");
  });

  it("answers /healthz and /readyz without a key", async () => {
    expect((await t.app.inject({ url: "/healthz" })).json()).toEqual({
      result: true,
      data: { status: "alive" },
    });
    expect((await t.app.inject({ url: "/readyz" })).json()).toEqual({
      result: true,
      data: { status: "ready", store: "up", sources: [] },
    });
  });
});

describe("an unreachable store", () => {
  it("answers 503 STORE_UNAVAILABLE on /readyz and the API (PostgreSQL down)", async () => {
    const store = createPostgresStore("postgres://nobody@127.0.0.1:1/none");
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store,
      ranker: createScoringRanker(),
      pepper: "p".repeat(32),
      clock: () => NOW,
    };
    const app = await buildApp(ctx, { services: createConsoleServices(ctx), closeServices: true });
    try {
      expect((await app.inject({ url: "/healthz" })).statusCode).toBe(200);
      expectEnvelope(await app.inject({ url: "/readyz" }), 503, "STORE_UNAVAILABLE");
      const res = await app.inject({
        url: `${V1}/resolve?domain=alice.wallet`,
        headers: { "api-key": "on_00000000_00000000000000000000000000000000" },
      });
      expectEnvelope(res, 503, "STORE_UNAVAILABLE");
      expect(res.body).not.toContain("ECONNREFUSED");
      expect(res.headers["retry-after"]).toBe("1");
      // The console's own error handler: the same answer and the same hint to come back.
      const invitation = await app.inject({ url: `/console/api/auth/invitation?token=${"a".repeat(43)}` });
      expectEnvelope(invitation, 503, "STORE_UNAVAILABLE");
      expect(invitation.headers["retry-after"]).toBe("1");
    } finally {
      await app.close();
      await store.close().catch(() => {});
    }
  });

  it("answers 503 for a cached key once the SQLite store is closed", async () => {
    const t = await createTestApp();
    try {
      expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
      await t.store.close();
      expectEnvelope(await t.get(`${V1}/resolve?domain=alice.wallet`), 503, "STORE_UNAVAILABLE");
      expectEnvelope(
        await t.get(`${V1}/reverse-resolve?walletAddress=${"0x".padEnd(42, "a")}`),
        503,
        "STORE_UNAVAILABLE",
      );
      expectEnvelope(await t.app.inject({ url: "/readyz" }), 503, "STORE_UNAVAILABLE");
    } finally {
      await t.close();
    }
  });
});

describe("errors on the raw socket", () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
  });

  function raw(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let data = "";
      socket.setEncoding("latin1");
      socket.on("data", (d) => {
        data += d;
      });
      socket.on("error", () => resolve(data));
      socket.on("close", () => resolve(data));
      socket.on("connect", () => socket.end(request));
      setTimeout(() => reject(new Error(`no answer; got ${data}`)), 5000).unref();
    });
  }

  function parse(response: string): { status: number; body: unknown } {
    const [head, body] = response.split("\r\n\r\n");
    return { status: Number(head.split(" ")[1]), body: JSON.parse(body) };
  }

  it("answers oversized headers with 431 HEADERS_TOO_LARGE in the envelope", async () => {
    const r = parse(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\napi-key: ${"k".repeat(20_000)}\r\n\r\n`));
    expect(r).toEqual({
      status: 431,
      body: { result: false, error: { code: "HEADERS_TOO_LARGE", message: expect.any(String) } },
    });
  });

  it("answers a request the parser refuses with 400 BAD_REQUEST in the envelope", async () => {
    const r = parse(await raw("NONSENSE\r\n\r\n"));
    expect(r).toEqual({
      status: 400,
      body: { result: false, error: { code: "BAD_REQUEST", message: expect.any(String) } },
    });
    const ctl = parse(await raw("GET /svc/api/v1/resolve?domain=a\u0001b HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(ctl.status).toBe(400);
  });

  it("answers raw (unencoded) UTF-8 bytes in the URL with 400 BAD_REQUEST", async () => {
    const req = Buffer.concat([
      Buffer.from("GET /svc/api/v1/resolve?domain="),
      Buffer.from("café.eth", "utf8"),
      Buffer.from(` HTTP/1.1\r\nHost: x\r\napi-key: ${t.key}\r\nConnection: close\r\n\r\n`),
    ]).toString("latin1");
    expect(parse(await raw(req)).body).toEqual({
      result: false,
      error: { code: "BAD_REQUEST", message: expect.any(String) },
    });
  });

  it("serves a real request end to end", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/svc/api/v1/resolve?domain=caf%C3%A9.eth`, {
      headers: { "api-key": t.key },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: { domain: string } }).data.domain).toBe("café.eth");
  });
});

describe("shutdown", () => {
  it("answers SHUTTING_DOWN (503) to requests that arrive while the app closes", async () => {
    let seen: { status: number; code: string } | undefined;
    const t = await createTestApp({
      beforeReady(app) {
        // Runs after the app's own preClose hook: the server still accepts, the gate is shut.
        app.addHook("preClose", async () => {
          const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/healthz`);
          seen = { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
        });
      },
    });
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    await t.close();
    expect(seen).toEqual({ status: 503, code: "SHUTTING_DOWN" });
  });
});

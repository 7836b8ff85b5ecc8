import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { V1Extension } from "../../src/api/plugins/v1-extension.js";
import { AppError } from "../../src/domain/errors.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createTestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

describe("the v1 extension point", () => {
  it("runs extension hooks after authentication, with the key and project on the request", async () => {
    const seen: Array<{ keyId: number | undefined; project: string | undefined; url: string }> = [];
    const completed: number[] = [];
    const allowlist: V1Extension = (scope) => {
      scope.addHook("onRequest", async (request) => {
        seen.push({ keyId: request.apiKey?.id, project: request.project?.name, url: request.url });
        if (request.headers["x-test-ip"] === "blocked") throw new AppError("IP_NOT_ALLOWED");
      });
      scope.addHook("onResponse", async (_request, reply) => {
        completed.push(reply.statusCode);
      });
    };
    const t = await createTestApp({ app: { v1Hooks: [allowlist] } });
    try {
      expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
      const blocked = await t.get(`${V1}/resolve?domain=alice.wallet`, { "x-test-ip": "blocked" });
      expect(blocked.statusCode).toBe(403);
      expect(blocked.json()).toEqual({
        result: false,
        error: { code: "IP_NOT_ALLOWED", message: expect.any(String) },
      });
      // Unauthenticated: refused by the api-key hook before the extension runs.
      expect((await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet` })).statusCode).toBe(401);
      // Outside the v1 scope: not run.
      await t.app.inject({ url: "/healthz" });
      expect(seen).toHaveLength(2);
      expect(seen[0]).toMatchObject({ project: "test", keyId: expect.any(Number) });
      expect(completed).toEqual([200, 403, 401]);
      expect(typeof t.app.apiKeys.invalidateKey).toBe("function");
    } finally {
      await t.close();
    }
  });

  it("ranks with the key's project settings (scoring ranker)", async () => {
    const t = await createTestApp({ ranker: createScoringRanker() });
    try {
      const before = await t.get(`${V1}/deep-resolve?domain=alice.wallet`);
      expect(before.json().data[0].network).toBe("POLYGON");
      await t.store.projects.updateProjectSettings(t.projectId, { networks: { disabled: ["POLYGON"] } });
      t.app.apiKeys.invalidateProject(t.projectId);
      const after = await t.get(`${V1}/deep-resolve?domain=alice.wallet`);
      expect(after.json().data.map((r: { network: string }) => r.network)).not.toContain("POLYGON");
      expect((await t.get(`${V1}/resolve?domain=alice.wallet&network=POLYGON`)).statusCode).toBe(404);
      const explained = await t.get(`${V1}/resolve?domain=alice.wallet&explain=true`);
      const { score, scoreDetails } = explained.json().data;
      expect(scoreDetails.reduce((s: number, d: { effect: number }) => s + d.effect, 0)).toBeCloseTo(
        score,
        0,
      );
    } finally {
      await t.close();
    }
  });

  it("trusts X-Forwarded-For only when trustProxy is set", async () => {
    const ips: string[] = [];
    const capture: V1Extension = (scope) => {
      scope.addHook("onRequest", async (request) => {
        ips.push(request.ip);
      });
    };
    for (const trustProxy of [undefined, true]) {
      const t = await createTestApp({ app: { v1Hooks: [capture], ...(trustProxy ? { trustProxy } : {}) } });
      try {
        await t.get(`${V1}/resolve?domain=alice.wallet`, { "x-forwarded-for": "203.0.113.9" });
      } finally {
        await t.close();
      }
    }
    expect(ips).toEqual(["127.0.0.1", "203.0.113.9"]);
  });

  it("passes the caller's country from the configured header to the ranking", async () => {
    const countries: Array<string | null> = [];
    const t = await createTestApp({
      app: { countryHeader: "CF-IPCountry" },
      ranker: {
        rank(candidates, ctx) {
          countries.push(ctx.country);
          return candidates.map((d) => ({
            domain: d,
            score: d.baseScore,
            spam: d.spam,
            tags: d.tags,
            details: [],
          }));
        },
      },
    });
    try {
      await t.get(`${V1}/resolve?domain=bob.eth`, { "cf-ipcountry": "de" });
      await t.get(`${V1}/resolve?domain=bob.eth`, { "cf-ipcountry": "not a country" });
      // Another endpoint: the same query again would be answered from the answer cache, unranked.
      await t.get(`${V1}/deep-resolve?domain=bob.eth`);
      expect(countries).toEqual(["DE", null, null]);
    } finally {
      await t.close();
    }
  });
});

describe("logging", () => {
  it("never writes the api-key or cookies, and logs nothing per request at info", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const logHeaders: V1Extension = (scope) => {
      scope.addHook("onRequest", async (request) => {
        if (request.headers["x-log-headers"]) request.log.warn({ headers: request.headers }, "headers");
      });
    };
    const t = await createTestApp({ logger: pino({ level: "info" }, sink), app: { v1Hooks: [logHeaders] } });
    try {
      await t.get(`${V1}/resolve?domain=alice.wallet`);
      await t.get(`${V1}/resolve?domain=nobody.wallet`);
      await t.get(`${V1}/resolve?domain=alice`);
      expect(lines).toEqual([]);
      await t.get(`${V1}/resolve?domain=alice.wallet`, { "x-log-headers": "1", cookie: "session=abc" });
      t.app.log.info({ req: { headers: { "api-key": t.key, authorization: "Bearer x" } } }, "direct");
      const out = lines.join("");
      expect(out).toContain("***");
      expect(out).not.toContain(t.key);
      expect(out).not.toContain("session=abc");
      expect(out).not.toContain("Bearer x");
    } finally {
      await t.close();
    }
  });
});

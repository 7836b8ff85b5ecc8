import Fastify from "fastify";
import type { WebhookService } from "../../src/api/webhooks/webhook-service.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResolution } from "../../src/resolution/resolution.js";
import { CONSOLE_PREFIX, consoleRoutes } from "../../src/api/routes/console/console.routes.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import { type Agent, type ConsoleTestApp, createConsoleTestApp } from "./helpers/console-app.js";

const big = (n: number) => JSON.stringify({ name: "x".repeat(n), email: "a@b.co", password: "p".repeat(n) });
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

/** Bodies no console route accepts: each must get a 4xx with the error envelope, never a 5xx. */
const BODIES: Array<[string, string | undefined, string | undefined]> = [
  ["no body", undefined, undefined],
  ["empty JSON body", "", "application/json"],
  ["malformed JSON", '{"email": "a@b.co",', "application/json"],
  ["JSON null", "null", "application/json"],
  ["JSON array", "[1,2,3]", "application/json"],
  ["JSON string", '"hello"', "application/json"],
  [
    "wrong types",
    JSON.stringify({ email: 5, password: [], name: {}, role: 7, token: true, allowedIps: "x" }),
    "application/json",
  ],
  [
    "prototype pollution",
    '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
    "application/json",
  ],
  ["deep nesting", nested(2000), "application/json"],
  ["oversized body", big(3 * 1024 * 1024), "application/json"],
  ["long strings", big(20_000), "application/json"],
  ["form encoding", "email=a%40b.co&password=x", "application/x-www-form-urlencoded"],
  ["plain text", "hello", "text/plain"],
  [
    "control characters",
    JSON.stringify({ name: "a\u0000b\u0007", email: "a\u0000@b.co", role: "owner\u0000" }),
    "application/json",
  ],
  ["bad unicode", '{"name":"\\ud800","email":"\\udfff@x.y"}', "application/json"],
];

describe("hostile input on every console route", () => {
  let t: ConsoleTestApp;
  let owner: Agent;
  let routes: Array<{ method: string; url: string }>;
  let ids: Record<string, number>;

  beforeAll(async () => {
    t = await createConsoleTestApp();
    const bare = Fastify();
    routes = [];
    bare.addHook("onRoute", (r) => {
      for (const m of [r.method].flat()) if (m !== "HEAD") routes.push({ method: m, url: r.url });
    });
    await bare.register(consoleRoutes, {
      prefix: CONSOLE_PREFIX,
      services: t.services,
      config: t.ctx.config,
      resolution: createResolution({ store: t.store.domainMap, ranker: t.ctx.ranker }),
      // Only the routes are collected here: no handler runs.
      webhooks: {} as WebhookService,
    });
    await bare.ready();
    await bare.close();
    const o = await signedIn(t, "hostile");
    owner = o.agent;
    const member = await createAccount(t, "member");
    const p = await createProject(t, [
      { id: o.id, role: "owner" },
      { id: member.id, role: "developer" },
    ]);
    const key = await t.services.projects.createKey(p.id, "k");
    const { invitation } = await t.services.accounts.invite("pending@example.test", {
      projectId: p.id,
      role: "viewer",
    });
    ids = { projectId: p.id, accountId: member.id, keyId: key.id, invitationId: invitation.id };
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers malformed, missing and oversized bodies with a 4xx and the error envelope", async () => {
    // Deletions last, the project's own deletion at the very end: the other routes keep their targets.
    const rank = (r: { method: string; url: string }) =>
      r.url.endsWith("/logout") ? 3 : r.method !== "DELETE" ? 0 : r.url.endsWith(":projectId") ? 2 : 1;
    const unsafe = routes.filter((r) => r.method !== "GET").sort((a, b) => rank(a) - rank(b));
    expect(unsafe.length).toBeGreaterThan(15);
    let checked = 0;
    for (const r of unsafe) {
      const url = r.url.replace(/:([a-zA-Z]+)/g, (_, name: string) => String(ids[name]));
      for (const [label, payload, type] of BODIES) {
        // Routes without a body ignore one; what matters is that no input gets a 5xx.
        const headers: Record<string, string> = { "x-csrf-token": owner.csrf! };
        if (type) headers["content-type"] = type;
        const raw = await t.app.inject({
          method: r.method as "POST",
          url,
          headers: { ...headers, cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
          ...(payload === undefined ? {} : { payload }),
        });
        const where = `${r.method} ${r.url} with ${label}`;
        expect(raw.statusCode, `${where}: ${raw.body.slice(0, 200)}`).toBeLessThan(500);
        if (raw.statusCode >= 400) {
          const body = raw.json();
          expect(body.result, where).toBe(false);
          expect(typeof body.error.code, where).toBe("string");
          expect(typeof body.error.message, where).toBe("string");
        }
        checked++;
      }
    }
    expect(checked).toBe(unsafe.length * BODIES.length);
  });

  it("refuses the bodies of routes that take one with the right code", async () => {
    const o = await signedIn(t, "hostile2");
    owner = o.agent;
    const p = (await createProject(t, [{ id: o.id, role: "owner" }])).id;
    const expectCode = async (
      method: string,
      url: string,
      payload: string | undefined,
      type: string | undefined,
      code: string,
      status: number,
    ) => {
      const res = await t.app.inject({
        method: method as "POST",
        url: `${CONSOLE_PREFIX}/${url}`,
        headers: {
          "x-csrf-token": owner.csrf!,
          cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
          ...(type ? { "content-type": type } : {}),
        },
        ...(payload === undefined ? {} : { payload }),
      });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
      expect(res.json().error.code).toBe(code);
    };
    await expectCode("POST", "projects", undefined, undefined, "BAD_REQUEST", 400);
    await expectCode("POST", "projects", "{", "application/json", "BAD_REQUEST", 400);
    await expectCode("POST", "projects", "{}", "application/json", "MISSING_PARAMETER", 400);
    await expectCode(
      "POST",
      "projects",
      JSON.stringify({ name: "x".repeat(101) }),
      "application/json",
      "PARAMETER_TOO_LONG",
      400,
    );
    await expectCode(
      "POST",
      "projects",
      JSON.stringify({ name: { a: 1 } }),
      "application/json",
      "INVALID_PARAMETER",
      400,
    );
    await expectCode(
      "POST",
      "projects",
      JSON.stringify({ name: "a\u0001b" }),
      "application/json",
      "INVALID_PARAMETER",
      400,
    );
    await expectCode("POST", "projects", big(20_000), "application/json", "PAYLOAD_TOO_LARGE", 413);
    await expectCode("POST", "projects", "name=x", "text/plain", "BAD_REQUEST", 400);
    await expectCode("POST", "projects", "<name>x</name>", "application/xml", "UNSUPPORTED_MEDIA_TYPE", 415);
    await expectCode(
      "PUT",
      `projects/${p}/settings`,
      JSON.stringify({ bogus: 1 }),
      "application/json",
      "INVALID_PARAMETER",
      400,
    );
    await expectCode(
      "PUT",
      `projects/${p}/settings`,
      JSON.stringify({ providers: { enabled: ["MARS"] } }),
      "application/json",
      "INVALID_PARAMETER",
      400,
    );
    await expectCode(
      "PUT",
      `projects/${p}/settings`,
      big(3 * 1024 * 1024),
      "application/json",
      "PAYLOAD_TOO_LARGE",
      413,
    );
    // The console's "try it", the settings dry run and the password strength check.
    const json = "application/json";
    const tryIt = `projects/${p}/try`;
    await expectCode("POST", tryIt, "{}", json, "MISSING_PARAMETER", 400);
    await expectCode("POST", tryIt, JSON.stringify({ method: "resolve" }), json, "MISSING_PARAMETER", 400);
    await expectCode("POST", tryIt, JSON.stringify({ method: "DROP TABLE" }), json, "INVALID_PARAMETER", 400);
    await expectCode(
      "POST",
      tryIt,
      JSON.stringify({ method: "resolve", domain: "x".repeat(1025) }),
      json,
      "PARAMETER_TOO_LONG",
      400,
    );
    await expectCode(
      "POST",
      tryIt,
      JSON.stringify({ method: "resolve", domain: "a\u0000\u202e.wallet" }),
      json,
      "INVALID_DOMAIN",
      400,
    );
    await expectCode(
      "POST",
      tryIt,
      JSON.stringify({ method: "resolve", domain: "a.wallet", network: "' OR 1=1" }),
      json,
      "INVALID_NETWORK",
      400,
    );
    await expectCode(
      "POST",
      tryIt,
      JSON.stringify({ method: "reverse-resolve", address: "0x" + "g".repeat(40) }),
      json,
      "INVALID_ADDRESS",
      400,
    );
    await expectCode("POST", tryIt, big(20_000), json, "PAYLOAD_TOO_LARGE", 413);
    const dry = `projects/${p}/settings/dry-run`;
    await expectCode("POST", dry, "{}", json, "MISSING_PARAMETER", 400);
    await expectCode("POST", dry, JSON.stringify({ settings: "x" }), json, "INVALID_PARAMETER", 400);
    await expectCode("POST", dry, JSON.stringify({ settings: { bogus: 1 } }), json, "INVALID_PARAMETER", 400);
    await expectCode(
      "POST",
      dry,
      JSON.stringify({ settings: { __proto__: { a: 1 }, networks: { disabled: ["x"] } } }),
      json,
      "INVALID_PARAMETER",
      400,
    );
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ tld: `t${i}`, provider: "ENS" }));
    await expectCode(
      "POST",
      dry,
      JSON.stringify({ settings: { exceptions: tooMany } }),
      json,
      "INVALID_PARAMETER",
      400,
    );
    await expectCode("POST", dry, big(3 * 1024 * 1024), json, "PAYLOAD_TOO_LARGE", 413);
    const strength = "auth/password-strength";
    await expectCode("POST", strength, "{}", json, "MISSING_PARAMETER", 400);
    await expectCode(
      "POST",
      strength,
      JSON.stringify({ password: "x".repeat(1025) }),
      json,
      "PARAMETER_TOO_LONG",
      400,
    );
    await expectCode(
      "POST",
      strength,
      JSON.stringify({ password: { a: 1 } }),
      json,
      "INVALID_PARAMETER",
      400,
    );
    await expectCode("POST", strength, big(20_000), json, "PAYLOAD_TOO_LARGE", 413);
    await expectCode(
      "POST",
      `projects/${p}/members`,
      JSON.stringify({ email: "not-an-email", role: "viewer" }),
      "application/json",
      "INVALID_PARAMETER",
      400,
    );
    await expectCode(
      "POST",
      `projects/${p}/members`,
      JSON.stringify({ email: "a@b.co", role: "god" }),
      "application/json",
      "INVALID_PARAMETER",
      400,
    );
    await expectCode("GET", "projects/abc", undefined, undefined, "NOT_FOUND", 404);
    await expectCode("GET", `projects/${"9".repeat(30)}`, undefined, undefined, "NOT_FOUND", 404);
    await expectCode("DELETE", `projects/${p}/keys/999999`, undefined, undefined, "NOT_FOUND", 404);
    await expectCode(
      "POST",
      "auth/login",
      JSON.stringify({ email: "a@b.co", password: "x".repeat(2000) }),
      "application/json",
      "PARAMETER_TOO_LONG",
      400,
    );
    // Settings accept their documented form, aliases normalized.
    const ok = await owner.put(`projects/${p}/settings`, {
      providerPriority: ["ens", "UNS"],
      providers: { disabled: ["FNS"] },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toEqual({
      providerPriority: ["NAMESPACE_C", "NAMESPACE_B"],
      providers: { disabled: ["NAMESPACE_A"] },
    });
    expect((await owner.get(`projects/${p}/settings`)).json().data).toEqual(ok.json().data);
  });
});

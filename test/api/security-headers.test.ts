import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, signedIn } from "../console/helpers/accounts.js";
import { API, Agent, type ConsoleTestApp, createConsoleTestApp, V1 } from "../console/helpers/console-app.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

/** The headers every answer carries, whatever its status or the part of the app that gave it. */
function expectSecurityHeaders(res: LightMyRequestResponse, what: string) {
  const csp = String(res.headers["content-security-policy"]);
  expect(csp, what).toContain("default-src 'self'");
  expect(csp, what).toContain("frame-ancestors 'none'");
  expect(csp, what).toContain("object-src 'none'");
  expect(res.headers["x-content-type-options"], what).toBe("nosniff");
  expect(res.headers["x-frame-options"], what).toBe("DENY");
  expect(res.headers["referrer-policy"], what).toBe("no-referrer");
  // Plain-HTTP deployments (the default PUBLIC_URL) get no HSTS: it would pin a browser to https.
  expect(res.headers["strict-transport-security"], what).toBeUndefined();
  // Old browsers' headers are left out: bytes on every answer that no API client reads.
  for (const old of [
    "x-xss-protection",
    "x-download-options",
    "x-dns-prefetch-control",
    "origin-agent-cluster",
  ])
    expect(res.headers[old], `${what}: ${old}`).toBeUndefined();
}

describe("security headers on the v1 API and the probes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      app: {
        v1Hooks: [
          (scope) => {
            scope.get("/boom", async () => {
              throw new Error("internal");
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
    [`${V1}/resolve?domain=alice.wallet`, 200, true],
    [`${V1}/resolve?domain=nobody.wallet`, 404, true],
    [`${V1}/resolve?domain=`, 400, true],
    [`${V1}/resolve?domain=alice.wallet`, 401, false],
    [`${V1}/nope`, 404, true],
    ["/nope", 404, false],
    [`${V1}/boom`, 500, true],
    [`${V1}/openapi.json`, 200, false],
    ["/healthz", 200, false],
  ] as const)("GET %s → %i", async (url, status, withKey) => {
    const res = withKey ? await t.get(url) : await t.app.inject({ url });
    expect(res.statusCode).toBe(status);
    expectSecurityHeaders(res, url);
  });

  it("on 405 and on a URL that does not parse", async () => {
    const wrong = await t.app.inject({ method: "DELETE", url: `${V1}/resolve?domain=alice.wallet` });
    expect(wrong.statusCode).toBe(405);
    expectSecurityHeaders(wrong, "405");
    const bad = await t.app.inject({ url: `${V1}/%E0%A4%A` });
    expect(bad.statusCode).toBe(400);
    expectSecurityHeaders(bad, "bad URL");
  });
});

describe("security headers and no-store on the console API", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  function expectConsoleAnswer(res: LightMyRequestResponse, status: number, what: string) {
    expect(res.statusCode, what).toBe(status);
    expectSecurityHeaders(res, what);
    expect(res.headers["cache-control"], what).toBe("no-store");
  }

  it("on success and on every kind of refusal: 400, 401, 403, 404, 405", async () => {
    const owner = await signedIn(t, "hdr");
    const viewer = await signedIn(t, "hdr-viewer");
    const p = await createProject(t, [
      { id: owner.id, role: "owner" },
      { id: viewer.id, role: "viewer" },
    ]);
    expectConsoleAnswer(await owner.agent.get("account"), 200, "200");
    expectConsoleAnswer(await owner.agent.post("projects", { name: "" }), 400, "400");
    expectConsoleAnswer(await new Agent(t.app).get("account"), 401, "401");
    expectConsoleAnswer(await viewer.agent.delete(`projects/${p.id}`), 403, "403 (a viewer deletes)");
    const forged = await owner.agent.request("POST", "auth/logout", {}, { "x-csrf-token": "forged" });
    expectConsoleAnswer(forged, 403, "403 (a forged CSRF token)");
    expectConsoleAnswer(await owner.agent.get("nope"), 404, "404 (no such route)");
    expectConsoleAnswer(await t.app.inject({ url: `${API}/nope` }), 404, "404 (anonymous)");
    expectConsoleAnswer(await t.app.inject({ method: "PATCH", url: `${API}/csrf` }), 405, "405");
    expectConsoleAnswer(await t.app.inject({ url: `${API}/%E0%A4%A` }), 400, "400 (URL does not parse)");
  });

  it("on a 5xx (the store gone)", async () => {
    const owner = await signedIn(t, "hdr-5xx");
    const v1 = await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet` });
    expectSecurityHeaders(v1, "v1 401 before");
    await t.store.close();
    const res = await owner.agent.get("projects");
    expect(res.statusCode).toBeGreaterThanOrEqual(500);
    expectSecurityHeaders(res, "console 5xx");
    expect(res.headers["cache-control"]).toBe("no-store");
  });
});

describe("security headers behind https", () => {
  it("add HSTS when PUBLIC_URL is https", async () => {
    const t = await createConsoleTestApp({ config: { publicUrl: "https://console.example" } });
    try {
      const res = await t.app.inject({ url: "/healthz" });
      expect(res.headers["strict-transport-security"]).toBe("max-age=31536000");
    } finally {
      await t.close();
    }
  });
});

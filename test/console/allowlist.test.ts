import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, signedIn } from "./helpers/accounts.js";
import { type Agent, type ConsoleTestApp, createConsoleTestApp, V1 } from "./helpers/console-app.js";

const RESOLVE = `${V1}/resolve?domain=alice.wallet`;

async function setup(t: ConsoleTestApp) {
  const owner = await signedIn(t, "owner");
  const project = await createProject(t, [{ id: owner.id, role: "owner" }]);
  const { key } = await t.services.projects.createKey(project.id, "k");
  return { owner, project, key };
}

function call(t: ConsoleTestApp, key: string, remoteAddress: string, headers: Record<string, string> = {}) {
  return t.app.inject({ url: RESOLVE, remoteAddress, headers: { "api-key": key, ...headers } });
}

describe("IP and origin allowlists on v1 (socket address, no trusted proxy)", () => {
  let t: ConsoleTestApp;
  let owner: Agent;
  let projectId: number;
  let key: string;
  beforeAll(async () => {
    t = await createConsoleTestApp();
    const s = await setup(t);
    owner = s.owner.agent;
    projectId = s.project.id;
    key = s.key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const security = (allowedIps: string[], allowedOrigins: string[] = []) =>
    owner.put(`projects/${projectId}/security`, { allowedIps, allowedOrigins });

  it("lets every address through while the list is empty", async () => {
    expect((await call(t, key, "198.51.100.1")).statusCode).toBe(200);
  });

  it("allows listed addresses and ranges and refuses the others with 403 IP_NOT_ALLOWED, at once", async () => {
    const put = await security(["203.0.113.0/24", "192.0.2.10", "2001:db8::/32"]);
    expect(put.statusCode).toBe(200);
    expect(put.json().data).toMatchObject({ allowedIps: ["203.0.113.0/24", "192.0.2.10", "2001:db8::/32"] });
    for (const ip of [
      "203.0.113.7",
      "203.0.113.255",
      "192.0.2.10",
      "::ffff:203.0.113.9",
      "2001:db8::1",
      "2001:db8:ffff::5",
    ]) {
      expect((await call(t, key, ip)).statusCode, ip).toBe(200);
    }
    for (const ip of ["198.51.100.1", "192.0.2.11", "203.0.114.1", "2001:db9::1", "127.0.0.1"]) {
      const res = await call(t, key, ip);
      expect(res.statusCode, ip).toBe(403);
      expect(res.json()).toEqual({
        result: false,
        error: { code: "IP_NOT_ALLOWED", message: "The caller's IP address is not allowed." },
      });
    }
  });

  it("ignores a forged X-Forwarded-For when no proxy is trusted", async () => {
    await security(["203.0.113.0/24"]);
    for (const xff of ["203.0.113.7", "198.51.100.1, 203.0.113.7", "203.0.113.7, 203.0.113.8"]) {
      const res = await call(t, key, "198.51.100.1", { "x-forwarded-for": xff, "x-real-ip": "203.0.113.7" });
      expect(res.statusCode, xff).toBe(403);
    }
    expect((await call(t, key, "203.0.113.7", { "x-forwarded-for": "198.51.100.1" })).statusCode).toBe(200);
  });

  it("checks the Origin of browser requests and answers allowed ones with CORS headers", async () => {
    await security([], ["https://app.example.com", "https://*.partner.test", "http://localhost:3000"]);
    for (const origin of [
      "https://app.example.com",
      "https://APP.example.com:443",
      "https://a.partner.test",
      "https://x.y.partner.test",
      "http://localhost:3000",
    ]) {
      const res = await call(t, key, "198.51.100.1", { origin });
      expect(res.statusCode, origin).toBe(200);
      expect(res.headers["access-control-allow-origin"]).toBe(origin);
      expect(res.headers.vary).toMatch(/Origin/);
      expect(res.headers["access-control-expose-headers"]).toMatch(/RateLimit/);
    }
    for (const origin of [
      "https://evil.example",
      "http://app.example.com",
      "https://partner.test",
      "https://app.example.com.evil.test",
      "null",
      "http://localhost:3001",
    ]) {
      const res = await call(t, key, "198.51.100.1", { origin });
      expect(res.statusCode, origin).toBe(403);
      expect(res.json().error.code).toBe("ORIGIN_NOT_ALLOWED");
      expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    }
    // Servers send no Origin: the origin list does not apply to them (the IP list does).
    expect((await call(t, key, "198.51.100.1")).statusCode).toBe(200);
  });

  it("answers CORS preflights without a key, and the real request is then checked", async () => {
    const pre = await t.app.inject({
      method: "OPTIONS",
      url: RESOLVE,
      headers: {
        origin: "https://app.example.com",
        "access-control-request-method": "GET",
        "access-control-request-headers": "api-key",
      },
    });
    expect(pre.statusCode).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("https://app.example.com");
    expect(pre.headers["access-control-allow-headers"]).toMatch(/api-key/);
    expect(pre.headers["access-control-allow-methods"]).toBe("GET");
  });

  it("validates the lists", async () => {
    for (const body of [
      { allowedIps: ["10.0.0.0/33"], allowedOrigins: [] },
      { allowedIps: ["300.1.1.1"], allowedOrigins: [] },
      { allowedIps: ["10.0.0.1/8/1"], allowedOrigins: [] },
      { allowedIps: [], allowedOrigins: ["https://app.example.com/path"] },
      { allowedIps: [], allowedOrigins: ["ftp://files.example.com"] },
      { allowedIps: [], allowedOrigins: ["https://user:pw@app.example.com"] },
      { allowedIps: Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`), allowedOrigins: [] },
    ]) {
      const res = await owner.put(`projects/${projectId}/security`, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json().result).toBe(false);
    }
  });
});

describe("allowlists behind a trusted proxy (TRUSTED_PROXY=127.0.0.1,10.0.0.0/8)", () => {
  let t: ConsoleTestApp;
  let key: string;
  beforeAll(async () => {
    t = await createConsoleTestApp({ config: { trustedProxy: "127.0.0.1,10.0.0.0/8" } });
    const s = await setup(t);
    key = s.key;
    await s.owner.agent.put(`projects/${s.project.id}/security`, {
      allowedIps: ["203.0.113.0/24"],
      allowedOrigins: [],
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("takes the client from X-Forwarded-For as written by the trusted proxies", async () => {
    expect((await call(t, key, "127.0.0.1", { "x-forwarded-for": "203.0.113.7" })).statusCode).toBe(200);
    // Two proxies: the client is the first address from the right that is not a proxy.
    expect((await call(t, key, "127.0.0.1", { "x-forwarded-for": "203.0.113.7, 10.1.2.3" })).statusCode).toBe(
      200,
    );
  });

  it("refuses an address a client wrote to the left of what the proxy appended", async () => {
    const res = await call(t, key, "127.0.0.1", { "x-forwarded-for": "203.0.113.7, 198.51.100.1" });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe("IP_NOT_ALLOWED");
  });

  it("ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    expect((await call(t, key, "198.51.100.1", { "x-forwarded-for": "203.0.113.7" })).statusCode).toBe(403);
  });

  it("refuses a malformed hop instead of falling back to the proxy's address", async () => {
    expect((await call(t, key, "127.0.0.1", { "x-forwarded-for": "not-an-ip" })).statusCode).toBe(403);
    // Without the header the proxy itself is the client, and it is not on the project's list.
    expect((await call(t, key, "127.0.0.1")).statusCode).toBe(403);
  });
});

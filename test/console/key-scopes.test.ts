import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, signedIn } from "./helpers/accounts.js";
import { type Agent, type ConsoleTestApp, createConsoleTestApp, V1 } from "./helpers/console-app.js";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe("API keys with limits of their own (console API and v1)", () => {
  let t: ConsoleTestApp;
  let owner: Agent;
  let viewer: Agent;
  let pid: number;
  const call = (key: string, url: string, init: { method?: "GET" | "POST"; body?: unknown } = {}) =>
    t.app.inject({
      method: init.method ?? "GET",
      url: `${V1}/${url}`,
      headers: { "api-key": key, ...(init.body ? { "content-type": "application/json" } : {}) },
      payload: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  const create = (body: Record<string, unknown>) =>
    owner.post(`projects/${pid}/keys`, { name: "k", ...body });

  beforeAll(async () => {
    t = await createConsoleTestApp({
      config: {
        plans: { free: { rps: 1000, monthlyQuota: 1_000_000, maxProjects: 5, maxKeys: 100, maxMembers: 10 } },
      },
    });
    const o = await signedIn(t, "keys-owner");
    const v = await signedIn(t, "keys-viewer");
    owner = o.agent;
    viewer = v.agent;
    pid = (
      await createProject(t, [
        { id: o.id, role: "owner" },
        { id: v.id, role: "viewer" },
      ])
    ).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses a call to an endpoint outside the key's scope with 403 ENDPOINT_NOT_ALLOWED", async () => {
    const res = await create({ endpoints: ["resolve", "batch-resolve"] });
    expect(res.statusCode).toBe(201);
    const { key, endpoints } = res.json().data;
    expect(endpoints).toEqual(["resolve", "batch-resolve"]);
    expect((await call(key, "resolve?domain=alice.wallet")).statusCode).toBe(200);
    expect(
      (await call(key, "batch/resolve", { method: "POST", body: { domains: ["alice.wallet"] } })).statusCode,
    ).toBe(200);
    for (const url of [
      "deep-resolve?domain=alice.wallet",
      "reverse-resolve?walletAddress=0x" + "ab".repeat(20),
    ]) {
      const r = await call(key, url);
      expect(r.statusCode, url).toBe(403);
      expect(r.json().error.code).toBe("ENDPOINT_NOT_ALLOWED");
      expect(r.json().error.message).toContain("resolve, batch-resolve");
    }
    const batch = await call(key, "batch/deep-resolve", {
      method: "POST",
      body: { domains: ["alice.wallet"] },
    });
    expect(batch.json().error.code).toBe("ENDPOINT_NOT_ALLOWED");
  });

  it("hides domains on networks outside the scope, and refuses 403 when the request names one", async () => {
    // The test world's alice.wallet is on POLYGON.
    const eth = (await create({ networks: ["ethereum"] })).json().data;
    expect(eth.networks).toEqual(["ETHEREUM"]);
    expect((await call(eth.key, "resolve?domain=alice.wallet")).json().error.code).toBe("DOMAIN_NOT_FOUND");
    expect((await call(eth.key, "deep-resolve?domain=alice.wallet")).json().data).toEqual([]);
    const named = await call(eth.key, "resolve?domain=alice.wallet&network=MATIC");
    expect(named.statusCode).toBe(403);
    expect(named.json().error.code).toBe("NETWORK_NOT_ALLOWED");
    const inBody = await call(eth.key, "batch/resolve", {
      method: "POST",
      body: { domains: ["alice.wallet"], network: "POLYGON" },
    });
    expect(inBody.json().error.code).toBe("NETWORK_NOT_ALLOWED");
    const poly = (await create({ networks: ["POLYGON"], providers: ["NAMESPACE_A"] })).json().data;
    expect((await call(poly.key, "resolve?domain=alice.wallet&network=POLYGON")).statusCode).toBe(200);
    const prov = await call(poly.key, "resolve?domain=alice.wallet&provider=NAMESPACE_B");
    expect(prov.statusCode).toBe(403);
    expect(prov.json().error.code).toBe("PROVIDER_NOT_ALLOWED");
    // The project's own disabled networks still apply under the key's scope.
    await owner.put(`projects/${pid}/settings`, { networks: { disabled: ["POLYGON"] } });
    expect((await call(poly.key, "resolve?domain=alice.wallet")).json().error.code).toBe("DOMAIN_NOT_FOUND");
    await owner.put(`projects/${pid}/settings`, {});
    expect((await call(poly.key, "resolve?domain=alice.wallet")).statusCode).toBe(200);
  });

  it("applies the scope to the change feed and the project's DoH before any stream or answer", async () => {
    const poly = (await create({ networks: ["POLYGON"], endpoints: ["changes", "resolve"] })).json().data;
    const named = await call(poly.key, "changes?networks=POLYGON,ETHEREUM");
    expect(named.statusCode).toBe(403);
    expect(named.json().error.code).toBe("NETWORK_NOT_ALLOWED");
    const doh = await call(poly.key, "dns-query?name=alice.wallet&type=A");
    expect(doh.statusCode).toBe(403);
    expect(doh.json().error.code).toBe("ENDPOINT_NOT_ALLOWED");
    // A network outside the scope makes the name invisible to the project's DoH, as a disabled one.
    const eth = (await create({ networks: ["ETHEREUM"] })).json().data;
    const hidden = await call(eth.key, "dns-query?name=alice.wallet&type=TXT");
    const all = (await create({})).json().data;
    const shown = await call(all.key, "dns-query?name=alice.wallet&type=TXT");
    expect(shown.statusCode).toBe(200);
    expect(shown.json().Status).toBe(0);
    expect(hidden.json().Status).toBe(3);
  });

  it("refuses a key after its expiry with 401 API_KEY_EXPIRED (fake clock)", async () => {
    const k = (await create({ expiresAt: iso(t.clock.now + HOUR) })).json().data;
    expect(k.expiresAt).toBe(iso(t.clock.now + HOUR));
    expect((await call(k.key, "resolve?domain=alice.wallet")).statusCode).toBe(200);
    t.clock.now += HOUR;
    const r = await call(k.key, "resolve?domain=alice.wallet");
    expect(r.statusCode).toBe(401);
    expect(r.json().error.code).toBe("API_KEY_EXPIRED");
    const listed = (await owner.get(`projects/${pid}/keys`))
      .json()
      .data.find((x: { id: number }) => x.id === k.id);
    expect(listed.status).toBe("expired");
  });

  it("applies a change of scope at once and records it in the audit log", async () => {
    const k = (await create({})).json().data;
    expect((await call(k.key, "deep-resolve?domain=alice.wallet")).statusCode).toBe(200);
    const patched = await owner.patch(`projects/${pid}/keys/${k.id}`, { endpoints: ["resolve"] });
    expect(patched.statusCode).toBe(200);
    expect((await call(k.key, "deep-resolve?domain=alice.wallet")).json().error.code).toBe(
      "ENDPOINT_NOT_ALLOWED",
    );
    await owner.patch(`projects/${pid}/keys/${k.id}`, { endpoints: null });
    expect((await call(k.key, "deep-resolve?domain=alice.wallet")).statusCode).toBe(200);
    const audit = (await owner.get(`projects/${pid}/audit?kind=key.update`)).json().data;
    // Newest first: the lifting, then the limiting.
    const [lifted, limited] = audit.entries.filter((e: { subject: string }) => e.subject === String(k.id));
    expect(limited).toMatchObject({ before: { endpoints: null }, after: { endpoints: ["resolve"] } });
    expect(lifted).toMatchObject({ before: { endpoints: ["resolve"] }, after: { endpoints: null } });
    expect(JSON.stringify(audit)).not.toContain(k.key);
  });

  it("rotates a key: the new one works at once, the old one until the overlap ends", async () => {
    const old = (await create({ endpoints: ["resolve"], networks: ["POLYGON"] })).json().data;
    const rot = await owner.post(`projects/${pid}/keys/${old.id}/rotate`, {
      overlapUntil: iso(t.clock.now + 2 * HOUR),
    });
    expect(rot.statusCode).toBe(201);
    expect(rot.headers["cache-control"]).toBe("no-store");
    const fresh = rot.json().data;
    expect(fresh.key).toMatch(/^on_[0-9a-f]{8}_/);
    expect(fresh).toMatchObject({ endpoints: ["resolve"], networks: ["POLYGON"], name: "k" });
    expect(fresh.previous).toMatchObject({
      id: old.id,
      rotatedTo: fresh.id,
      expiresAt: iso(t.clock.now + 2 * HOUR),
    });
    expect((await call(fresh.key, "resolve?domain=alice.wallet")).statusCode).toBe(200);
    expect((await call(old.key, "resolve?domain=alice.wallet")).statusCode).toBe(200);
    const again = await owner.post(`projects/${pid}/keys/${old.id}/rotate`, {
      overlapUntil: iso(t.clock.now),
    });
    expect(again.json().error.code).toBe("CONFLICT");
    t.clock.now += 2 * HOUR;
    const refused = await call(old.key, "resolve?domain=alice.wallet");
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error).toMatchObject({ code: "API_KEY_EXPIRED" });
    expect(refused.json().error.message).toContain("rotated");
    expect((await call(fresh.key, "resolve?domain=alice.wallet")).statusCode).toBe(200);
    const kinds = (await owner.get(`projects/${pid}/audit?kind=key.rotate`)).json().data.entries;
    expect(kinds.some((e: { subject: string }) => e.subject === String(old.id))).toBe(true);
  });

  it("shows each key's last use and requests this month", async () => {
    const k = (await create({})).json().data;
    for (let i = 0; i < 3; i++) await call(k.key, "resolve?domain=alice.wallet");
    const listed = (await owner.get(`projects/${pid}/keys`))
      .json()
      .data.find((x: { id: number }) => x.id === k.id);
    expect(listed.requestsThisMonth).toBe(3);
    expect(listed.lastUsedAt).toBe(iso(t.clock.now));
  });

  it("keeps key management to the roles that had it (viewer: read only)", async () => {
    const k = (await create({})).json().data;
    expect((await viewer.get(`projects/${pid}/keys`)).statusCode).toBe(200);
    expect((await viewer.patch(`projects/${pid}/keys/${k.id}`, { endpoints: ["resolve"] })).statusCode).toBe(
      403,
    );
    const rot = await viewer.post(`projects/${pid}/keys/${k.id}/rotate`, {
      overlapUntil: iso(t.clock.now + HOUR),
    });
    expect(rot.statusCode).toBe(403);
    expect(rot.json().error.code).toBe("FORBIDDEN");
  });

  describe("bad input is a field error, never a 5xx", () => {
    // An oversized value is either code, depending on which of the schema's alternatives reports it.
    const TOO_LONG = /^(PARAMETER_TOO_LONG|INVALID_PARAMETER)$/;
    const cases: Array<[string, Record<string, unknown>, string | RegExp, string]> = [
      ["an expiry in the past", { expiresAt: "2020-01-01T00:00:00Z" }, "INVALID_PARAMETER", "expiresAt"],
      [
        "an expiry without a time zone",
        { expiresAt: "2030-01-01T00:00:00" },
        "INVALID_PARAMETER",
        "expiresAt",
      ],
      [
        "an expiry that is not a date",
        { expiresAt: "2030-13-45T99:00:00Z" },
        "INVALID_PARAMETER",
        "expiresAt",
      ],
      ["an expiry as a number", { expiresAt: 1_900_000_000_000 }, "INVALID_PARAMETER", "expiresAt"],
      ["an expiry 20 years ahead", { expiresAt: "2046-12-01T00:00:00Z" }, "INVALID_PARAMETER", "expiresAt"],
      ["an unknown endpoint", { endpoints: ["resolve", "mint"] }, "INVALID_PARAMETER", "endpoints"],
      ["an unknown network", { networks: ["DOGECHAIN"] }, "INVALID_PARAMETER", "networks"],
      ["an unknown provider", { providers: ["NAMESPACE_Z"] }, "INVALID_PARAMETER", "providers"],
      ["an empty list", { endpoints: [] }, "INVALID_PARAMETER", "endpoints"],
      ["an overlong list", { networks: Array(33).fill("POLYGON") }, TOO_LONG, "networks"],
      ["an overlong item", { endpoints: ["r".repeat(65)] }, TOO_LONG, "endpoints"],
      ["a list of the wrong type", { endpoints: { resolve: true } }, "INVALID_PARAMETER", "endpoints"],
      ["items of the wrong type", { providers: [1, 2] }, "INVALID_PARAMETER", "providers"],
      ["a hostile value", { endpoints: ["<script>alert(1)</script>"] }, "INVALID_PARAMETER", "endpoints"],
    ];
    for (const [label, body, code, field] of cases) {
      it(`refuses ${label} (create and change)`, async () => {
        const res = await create(body);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error.code).toMatch(code);
        expect(res.json().error.message).toContain(field);
        expect(res.body).not.toContain("<script>");
      });
    }

    it("refuses the same on a change, and a rotation with a bad or missing overlap", async () => {
      const k = (await create({})).json().data;
      for (const [, body, code] of cases) {
        const res = await owner.patch(`projects/${pid}/keys/${k.id}`, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(res.json().error.code).toMatch(code);
      }
      for (const body of [
        {},
        { overlapUntil: iso(t.clock.now - HOUR) },
        { overlapUntil: iso(t.clock.now + 31 * 24 * HOUR) },
        { overlapUntil: "soon" },
        { overlapUntil: 5 },
      ]) {
        const res = await owner.post(`projects/${pid}/keys/${k.id}/rotate`, body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
      }
      expect(
        (await owner.post(`projects/${pid}/keys/999999/rotate`, { overlapUntil: iso(t.clock.now) }))
          .statusCode,
      ).toBe(404);
      expect((await owner.patch(`projects/${pid}/keys/${k.id}`, {})).statusCode).toBe(400);
    });
  });
});

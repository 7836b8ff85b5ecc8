import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRY_RUN_LIST_CAP } from "../../src/accounts/settings-dry-run.js";
import type { Network } from "../../src/domain/networks.js";
import type { Provider } from "../../src/domain/providers.js";
import type { Store } from "../../src/store/store.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import { Agent, type ConsoleTestApp, createConsoleTestApp, PASSWORD, V1 } from "./helpers/console-app.js";

const OWNER_A = "0x1111111111111111111111111111111111111111";
const OWNER_B = "0x2222222222222222222222222222222222222222";
let tokenCounter = 0;

async function addDomain(
  store: Store,
  now: number,
  name: string,
  provider: Provider,
  network: Network,
  owner: string,
  extra: { registeredAt?: number; expiresAt?: number | null; baseScore?: number } = {},
): Promise<void> {
  const [sld, ...rest] = name.split(".");
  await store.domainMap.upsertDomain({
    provider,
    network,
    tokenId: `0x${(++tokenCounter).toString(16).padStart(64, "0")}`,
    name,
    sld,
    tld: rest.at(-1)!,
    owner,
    contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    resolver: null,
    registeredAt: extra.registeredAt ?? now - 10 * 86_400_000,
    registeredBlock: 1,
    expiresAt: extra.expiresAt ?? null,
    lastUpdateBlock: 1,
    lastUpdateAt: now - 86_400_000,
    baseScore: extra.baseScore ?? 60,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
  });
}

describe.each(["sqlite", "postgres"] as const)("try it and the settings dry run on %s", (backend) => {
  let t: ConsoleTestApp;
  let owner: Agent;
  let viewer: Agent;
  let projectId: number;
  let apiKey: string;
  const v1 = async (path: string) => {
    const r = await t.app.inject({ url: `${V1}/${path}`, headers: { "api-key": apiKey } });
    return { status: r.statusCode, body: r.json() };
  };

  beforeAll(async () => {
    t = await createConsoleTestApp({ backend, services: { throttle: { triesPerSessionPerMinute: 1000 } } });
    const now = t.clock.now;
    const day = 86_400_000;
    // bob.wallet: a collision NAMESPACE_A (older, wins by default) / NAMESPACE_B, both on POLYGON.
    await addDomain(t.store, now, "bob.wallet", "NAMESPACE_A", "POLYGON", OWNER_A, {
      registeredAt: now - 20 * day,
    });
    await addDomain(t.store, now, "bob.wallet", "NAMESPACE_B", "POLYGON", OWNER_B);
    // dave.crypto: NAMESPACE_B on POLYGON (older) and on ETHEREUM.
    await addDomain(t.store, now, "dave.crypto", "NAMESPACE_B", "POLYGON", OWNER_A, {
      registeredAt: now - 20 * day,
    });
    await addDomain(t.store, now, "dave.crypto", "NAMESPACE_B", "ETHEREUM", OWNER_B);
    // carol.eth: one holder, on ETHEREUM; old.eth: expired.
    await addDomain(t.store, now, "carol.eth", "NAMESPACE_C", "ETHEREUM", OWNER_A);
    await addDomain(t.store, now, "old.eth", "NAMESPACE_C", "ETHEREUM", OWNER_A, { expiresAt: now - day });
    const o = await signedIn(t, "try-owner");
    owner = o.agent;
    const v = await createAccount(t, "try-viewer");
    projectId = (
      await createProject(t, [
        { id: o.id, role: "owner" },
        { id: v.id, role: "viewer" },
      ])
    ).id;
    viewer = await new Agent(t.app).start();
    await viewer.post("auth/login", { email: v.email, password: PASSWORD });
    apiKey = (await t.services.projects.createKey(projectId, "k")).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const tryIt = (agent: Agent, body: object) => agent.post(`projects/${projectId}/try`, body);

  it("answers exactly what API v1 answers this project's keys, explain as a table", async () => {
    const cases: Array<[object, string]> = [
      [{ method: "resolve", domain: "alice.wallet" }, "resolve?domain=alice.wallet"],
      [
        { method: "resolve", domain: " BOB.wallet ", explain: true },
        "resolve?domain=bob.wallet&explain=true",
      ],
      [
        { method: "deep-resolve", domain: "bob.wallet", explain: true },
        "deep-resolve?domain=bob.wallet&explain=true",
      ],
      [
        { method: "deep-resolve", domain: "dave.crypto", network: "eth" },
        "deep-resolve?domain=dave.crypto&network=ETHEREUM",
      ],
      [{ method: "resolve", domain: "nobody.wallet" }, "resolve?domain=nobody.wallet"],
      [{ method: "deep-resolve", domain: "nobody.wallet" }, "deep-resolve?domain=nobody.wallet"],
      [
        { method: "reverse-resolve", address: OWNER_A.toUpperCase().replace("0X", "0x") },
        `reverse-resolve?walletAddress=${OWNER_A}`,
      ],
      [
        { method: "reverse-resolve", address: OWNER_B, provider: "uns" },
        `reverse-resolve?walletAddress=${OWNER_B}&provider=NAMESPACE_B`,
      ],
    ];
    for (const [body, path] of cases) {
      const res = await tryIt(owner, body);
      expect(res.statusCode, res.body).toBe(200);
      const d = res.json().data;
      const expected = await v1(path);
      expect(d.status, path).toBe(expected.status);
      expect(d.answer, path).toEqual(expected.body);
      expect(d.method).toBe((body as { method: string }).method);
      expect(d.request.startsWith(`/svc/api/v1/${d.method}?`)).toBe(true);
      // The request line, run with a key, gives the same answer.
      expect((await v1(d.request.slice(V1.length + 1))).body, d.request).toEqual(expected.body);
      if ((body as { explain?: boolean }).explain) {
        const records = Array.isArray(d.answer.data) ? d.answer.data : [d.answer.data];
        expect(d.explain).toHaveLength(records.length);
        for (const [i, row] of d.explain.entries()) {
          expect(row).toMatchObject({
            domain: records[i].domain,
            provider: records[i].provider,
            score: records[i].score,
          });
          expect(row.rules.length).toBeGreaterThan(0);
          for (const r of row.rules) {
            expect(typeof r.rule).toBe("string");
            expect(typeof r.points).toBe("number");
            expect(r.description.length).toBeGreaterThan(0);
          }
          // The rules' points add up to the score (docs/scoring.md, explain).
          expect(row.rules.reduce((a: number, r: { points: number }) => a + r.points, 0)).toBe(row.score);
        }
      } else expect(d.explain).toBeNull();
    }
  });

  it("lets a viewer try; counts nothing against the quota or the usage", async () => {
    const before = (await owner.get(`projects/${projectId}/dashboard`)).json().data;
    for (let i = 0; i < 5; i++) {
      const res = await tryIt(viewer, { method: "resolve", domain: "alice.wallet" });
      expect(res.statusCode, res.body).toBe(200);
    }
    const after = (await owner.get(`projects/${projectId}/dashboard`)).json().data;
    expect(after.quota.used).toBe(before.quota.used);
    expect(after.totals.requests).toBe(before.totals.requests);
  });

  it("refuses missing, malformed and hostile input with a 400 naming the field", async () => {
    const expectRefusal = async (body: unknown, code: string, text: RegExp) => {
      const res = await owner.post(`projects/${projectId}/try`, body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      expect(res.json().error.code, res.body).toBe(code);
      expect(res.json().error.message).toMatch(text);
    };
    await expectRefusal({}, "MISSING_PARAMETER", /"method"/);
    await expectRefusal({ method: "resolve" }, "MISSING_PARAMETER", /"domain" is required for resolve/);
    await expectRefusal({ method: "resolve", domain: "   " }, "MISSING_PARAMETER", /"domain"/);
    await expectRefusal({ method: "reverse-resolve" }, "MISSING_PARAMETER", /"address" is required/);
    await expectRefusal({ method: "lookup", domain: "a.b" }, "INVALID_PARAMETER", /"method"/);
    await expectRefusal({ method: "resolve", domain: "a..b" }, "INVALID_DOMAIN", /field "domain"/);
    await expectRefusal({ method: "resolve", domain: "x".repeat(2000) }, "PARAMETER_TOO_LONG", /"domain"/);
    await expectRefusal(
      { method: "resolve", domain: "a.wallet", network: "mars" },
      "INVALID_NETWORK",
      /field "network"/,
    );
    await expectRefusal(
      { method: "resolve", domain: "a.wallet", provider: "x" },
      "INVALID_PROVIDER",
      /field "provider"/,
    );
    await expectRefusal({ method: "reverse-resolve", address: "0x12" }, "INVALID_ADDRESS", /field "address"/);
    await expectRefusal(
      { method: "resolve", domain: "a.wallet", explain: "maybe" },
      "INVALID_PARAMETER",
      /"explain"/,
    );
    await expectRefusal({ method: "resolve", domain: "a\u0000.wallet" }, "INVALID_DOMAIN", /"domain"/);
  });

  it("dry run: lists the names whose winner changes, and the saved settings then answer so", async () => {
    const dry = async (settings: unknown) => {
      const res = await owner.post(`projects/${projectId}/settings/dry-run`, { settings });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    const A = { namespace: "NAMESPACE_A", network: "POLYGON", owner: OWNER_A };
    const B = { namespace: "NAMESPACE_B", network: "POLYGON", owner: OWNER_B };
    expect(await dry({})).toEqual({ scanned: 0, changed: 0, names: [], truncated: false });
    const priority = await dry({ providerPriority: ["uns"] });
    expect(priority).toMatchObject({ changed: 1, truncated: false });
    expect(priority.names).toEqual([{ name: "bob.wallet", before: A, after: B }]);
    expect(priority.scanned).toBe(2); // the two names held more than once

    const exception = await dry({ exceptions: [{ domain: "bob.wallet", provider: "UNS" }] });
    expect(exception.names).toEqual([{ name: "bob.wallet", before: A, after: B }]);
    expect(exception.scanned).toBe(1);

    const noPolygon = await dry({ networks: { disabled: ["POLYGON"] } });
    expect(noPolygon.names).toEqual([
      { name: "alice.wallet", before: expect.objectContaining({ namespace: "NAMESPACE_A" }), after: null },
      { name: "bob.wallet", before: A, after: null },
      {
        name: "dave.crypto",
        before: { namespace: "NAMESPACE_B", network: "POLYGON", owner: OWNER_A },
        after: { namespace: "NAMESPACE_B", network: "ETHEREUM", owner: OWNER_B },
      },
    ]);
    const expired = await dry({ includeExpired: true });
    expect(expired.names).toEqual([
      {
        name: "old.eth",
        before: null,
        after: { namespace: "NAMESPACE_C", network: "ETHEREUM", owner: OWNER_A },
      },
    ]);

    // Saved, the API answers what the dry run said.
    expect((await v1("resolve?domain=bob.wallet")).body.data.provider).toBe("NAMESPACE_A");
    const put = await owner.put(`projects/${projectId}/settings`, { providerPriority: ["uns"] });
    expect(put.statusCode, put.body).toBe(200);
    expect((await v1("resolve?domain=bob.wallet")).body.data.provider).toBe("NAMESPACE_B");
    const tried = (await tryIt(owner, { method: "resolve", domain: "bob.wallet" })).json().data;
    expect(tried.answer.data.provider).toBe("NAMESPACE_B");
    // The same settings again change nothing; going back lists bob.wallet the other way.
    expect((await dry({ providerPriority: ["UNS"] })).changed).toBe(0);
    expect((await dry({})).names).toEqual([{ name: "bob.wallet", before: B, after: A }]);
    await owner.put(`projects/${projectId}/settings`, {});
  });

  it("dry run: validated as PUT settings is (same code and message), for settings writers only", async () => {
    for (const settings of [
      { networks: { disabled: ["MARS"] } },
      { exceptions: [{ domain: "bob.wallet" }] },
      { exceptions: [{ domain: "bob.wallet", provider: "ENS", network: "POLYGON" }] },
      { colour: "blue" },
    ]) {
      const put = await owner.put(`projects/${projectId}/settings`, settings);
      const dry = await owner.post(`projects/${projectId}/settings/dry-run`, { settings });
      expect(dry.statusCode, dry.body).toBe(400);
      if (put.statusCode === 400)
        expect(dry.json().error, JSON.stringify(settings)).toEqual(put.json().error);
      else expect(dry.json().error.code).toBe("INVALID_PARAMETER");
    }
    for (const settings of ["nope", [1], null, 7]) {
      const dry = await owner.post(`projects/${projectId}/settings/dry-run`, { settings });
      expect(dry.statusCode, dry.body).toBe(400);
      expect(dry.json().error.code).toBe("INVALID_PARAMETER");
      expect(dry.json().error.message).toContain('"settings"');
    }
    const missing = await owner.post(`projects/${projectId}/settings/dry-run`, {});
    expect(missing.json().error).toMatchObject({ code: "MISSING_PARAMETER" });
    expect(missing.json().error.message).toContain('"settings"');
    const refused = await viewer.post(`projects/${projectId}/settings/dry-run`, { settings: {} });
    expect(refused.statusCode).toBe(403);
    expect((await owner.get(`projects/${projectId}/settings`)).json().data).toEqual({});
  });

  it("dry run: counts every changed name, lists the first ones, and agrees with ranking every name", async () => {
    const now = t.clock.now;
    const n = DRY_RUN_LIST_CAP + 15;
    for (let i = 0; i < n; i++) {
      const name = `bulk${String(i).padStart(4, "0")}.wallet`;
      await addDomain(t.store, now, name, "NAMESPACE_A", "POLYGON", OWNER_A, {
        registeredAt: now - 30 * 86_400_000,
      });
      await addDomain(
        t.store,
        now,
        name,
        i % 3 === 0 ? "NAMESPACE_B" : "NAMESPACE_A",
        i % 3 === 0 ? "ETHEREUM" : "BSC",
        OWNER_B,
      );
    }
    const res = await owner.post(`projects/${projectId}/settings/dry-run`, {
      settings: { providerPriority: ["NAMESPACE_B"], networks: { disabled: ["BSC"] } },
    });
    const d = res.json().data;
    // Brute force: rank every indexed name under both settings.
    const names = new Set<string>();
    for await (const page of t.store.scoring.iterateDomainNames(1000)) for (const x of page) names.add(x);
    const rank = (settings: Record<string, unknown>, cands: Parameters<typeof t.ctx.ranker.rank>[0]) =>
      t.ctx.ranker.rank(cands, { projectSettings: settings, country: null, now, explain: false })[0]?.domain
        .id;
    let changed = 0;
    for (const name of names) {
      const cands = await t.store.domainMap.findDomainsByName([name], {});
      if (
        rank({}, cands) !==
        rank({ providerPriority: ["NAMESPACE_B"], networks: { disabled: ["BSC"] } }, cands)
      )
        changed++;
    }
    // The NAMESPACE_B holders win under the priority: every third bulk name, and bob.wallet.
    expect(changed).toBe(Math.ceil(n / 3) + 1);
    expect(d.changed).toBe(changed);
    expect(d.names).toHaveLength(Math.min(changed, DRY_RUN_LIST_CAP));
    expect(d.truncated).toBe(changed > DRY_RUN_LIST_CAP);
    expect(d.scanned).toBeLessThan(names.size + 1);
  });
});

describe("try it is limited per session", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({ services: { throttle: { triesPerSessionPerMinute: 3 } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers 429 TOO_MANY_ATTEMPTS with Retry-After past the limit, per session", async () => {
    const a = await signedIn(t, "limited");
    const p = await createProject(t, [{ id: a.id, role: "owner" }]);
    for (let i = 0; i < 3; i++) {
      const ok = await a.agent.post(`projects/${p.id}/try`, { method: "resolve", domain: "alice.wallet" });
      expect(ok.statusCode, ok.body).toBe(200);
    }
    const refused = await a.agent.post(`projects/${p.id}/try`, { method: "resolve", domain: "alice.wallet" });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe("TOO_MANY_ATTEMPTS");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    const other = await new Agent(t.app).start();
    await other.post("auth/login", { email: a.email, password: PASSWORD });
    const fresh = await other.post(`projects/${p.id}/try`, { method: "resolve", domain: "alice.wallet" });
    expect(fresh.statusCode).toBe(200);
  });
});

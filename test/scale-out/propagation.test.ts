import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountsRepo } from "../../src/accounts/accounts.repo.js";
import { hashPassword } from "../../src/accounts/password.js";
import { ProjectsRepo } from "../../src/accounts/projects.repo.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../helpers/pg.js";
import {
  apiProcessEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../helpers/server-process.js";

/**
 * Changes reach every API process within 1 s: two real `omniname start`
 * processes (OMNINAME_ROLES=api) on one PostgreSQL database. Every change is made through process
 * A's console API, as an operator would; process B must apply it within BOUND_MS. The key and
 * allowlist caches keep their default TTL (2 s), longer than the bound, so only the change
 * channel can bring a change in time.
 */
const BOUND_MS = 1_000;
const V1 = "/svc/api/v1";
const CONSOLE = "/console/api";
const PASSWORD = "correct horse battery staple";
const NAME = "alice.wallet";

// biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field
type Json = any;

/** A browser's session on one process's console: its cookies and its CSRF token. */
class Browser {
  private readonly cookies = new Map<string, string>();
  private csrf = "";
  constructor(private readonly origin: string) {}

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    if (method !== "GET") headers["x-csrf-token"] = this.csrf;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${this.origin}${CONSOLE}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const json = await res.json();
    if (typeof json?.data?.csrfToken === "string") this.csrf = json.data.csrfToken;
    return { status: res.status, json };
  }

  async login(email: string): Promise<void> {
    await this.request("GET", "/csrf");
    const res = await this.request("POST", "/auth/login", { email, password: PASSWORD });
    if (res.status !== 200) throw new Error(`login: ${res.status} ${JSON.stringify(res.json)}`);
  }
}

/** One resolve on a process: the HTTP status and the top answer's provider. */
async function resolveOn(
  s: ServerProcess,
  key: string,
): Promise<{ status: number; provider: string | null }> {
  const res = await fetch(`${s.url}${V1}/resolve?domain=${NAME}`, { headers: { "api-key": key } });
  const body = (await res.json()) as { data?: { provider?: string } };
  return { status: res.status, provider: body.data?.provider ?? null };
}

/** Polls `check` every 5 ms from `t0` until it holds; the milliseconds since `t0`, or throws after 5 s. */
async function until(t0: number, check: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - t0;
    if (performance.now() - t0 > 5_000) throw new Error("not within 5 s");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("changes made on API process A reach API process B (two OS processes, one PostgreSQL)", () => {
  let db: { url: string; drop: () => Promise<void> };
  const dirs: string[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let store: Store;
  let projectId: number;
  let browser: Browser;
  const measured: Record<string, number[]> = {};
  const record = (what: string, ms: number) => {
    measured[what] = [...(measured[what] ?? []), Math.round(ms)];
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    const pepper = randomBytes(16).toString("hex");
    const envOf = () => apiProcessEnv({ databaseUrl: db.url, pepper, dirs, name: "propagation" });
    // The first loads the fixture world into the empty database; the second finds it there.
    a = await startServerProcess(envOf(), ["--fixtures"]);
    b = await startServerProcess(envOf());

    // An owner account and its project, written straight to the shared database.
    store = await createStore({ databaseUrl: db.url, dataDir: dirs[0] });
    const now = Date.now();
    const account = await new AccountsRepo(store.accounts).insertAccount({
      email: "owner@example.test",
      fullName: "Owner",
      passwordHash: await hashPassword(PASSWORD),
      now,
    });
    await new AccountsRepo(store.accounts).markEmailVerified(account.id, now);
    projectId = (await store.projects.createProject({ name: "propagation", plan: "internal" })).id;
    await new ProjectsRepo(store.accounts).addMember(projectId, account.id, "owner", now);
    browser = new Browser(a.url);
    await browser.login("owner@example.test");
  }, 120_000);

  afterAll(async () => {
    console.log(`propagation A → B, ms per run: ${JSON.stringify(measured)}`);
    for (const s of [a, b]) if (s) await stopServerProcess(s);
    await store?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await db?.drop();
  });

  async function createKey(name: string): Promise<{ id: number; key: string; createdAt: number }> {
    const res = await browser.request("POST", `/projects/${projectId}/keys`, { name });
    expect(res.status).toBe(201);
    return { id: res.json.data.id, key: res.json.data.key, createdAt: performance.now() };
  }

  it("both report the store and the change channel up in /readyz (no Redis configured)", async () => {
    for (const s of [a, b]) {
      const res = await fetch(`${s.url}/readyz`);
      expect(res.status).toBe(200);
      const data = ((await res.json()) as { data: Record<string, unknown> }).data;
      expect(data).toMatchObject({ status: "ready", store: "up", channel: "up" });
      expect(data).not.toHaveProperty("redis");
    }
  });

  it("a key created on A is accepted by B within 1 s", async () => {
    for (let i = 0; i < 3; i++) {
      const k = await createKey(`created ${i}`);
      const ms = await until(k.createdAt, async () => (await resolveOn(b, k.key)).status === 200);
      record("create", ms);
      expect(ms).toBeLessThan(BOUND_MS);
      expect((await resolveOn(a, k.key)).status).toBe(200);
    }
  });

  it("a key revoked on A is refused by B within 1 s (both had it cached), and by A at once", async () => {
    for (let i = 0; i < 3; i++) {
      const k = await createKey(`revoked ${i}`);
      await until(k.createdAt, async () => (await resolveOn(b, k.key)).status === 200);
      expect((await resolveOn(a, k.key)).status).toBe(200);
      const t0 = performance.now();
      const res = await browser.request("DELETE", `/projects/${projectId}/keys/${k.id}`);
      expect(res.status).toBe(200);
      const revokedAt = performance.now();
      expect((await resolveOn(a, k.key)).status).toBe(401);
      const ms = await until(t0, async () => (await resolveOn(b, k.key)).status === 401);
      record("revoke", ms);
      record("revokeAfterAnswer", Math.max(0, ms - (revokedAt - t0)));
      expect(ms).toBeLessThan(BOUND_MS);
      // Refused for good, not a blip.
      for (let j = 0; j < 5; j++) expect((await resolveOn(b, k.key)).status).toBe(401);
    }
  });

  it("a key's scope changed on A is enforced by B within 1 s (B had the key cached)", async () => {
    const k = await createKey("scoped");
    const deep = async (s: ServerProcess) =>
      (await fetch(`${s.url}${V1}/deep-resolve?domain=${NAME}`, { headers: { "api-key": k.key } })).status;
    await until(k.createdAt, async () => (await deep(b)) === 200);
    for (const [endpoints, want] of [
      [["resolve"], 403],
      [null, 200],
    ] as const) {
      const t0 = performance.now();
      const res = await browser.request("PATCH", `/projects/${projectId}/keys/${k.id}`, { endpoints });
      expect(res.status).toBe(200);
      const ms = await until(t0, async () => (await deep(b)) === want);
      record(`scope→${want}`, ms);
      expect(ms).toBeLessThan(BOUND_MS);
      for (let j = 0; j < 3; j++) expect(await deep(b)).toBe(want);
    }
  });

  it("an expiry set on A, and a rotation's overlap, end the key on B within 1 s of their time", async () => {
    const LEAD_MS = 1_500;
    const k = await createKey("expiring");
    await until(k.createdAt, async () => (await resolveOn(b, k.key)).status === 200);
    const expiresAt = Date.now() + LEAD_MS;
    const atExpiry = performance.now() + LEAD_MS;
    const res = await browser.request("PATCH", `/projects/${projectId}/keys/${k.id}`, {
      expiresAt: new Date(expiresAt).toISOString(),
    });
    expect(res.status).toBe(200);
    // Still served until its time; then refused everywhere.
    expect((await resolveOn(b, k.key)).status).toBe(200);
    const ms = await until(atExpiry - LEAD_MS, async () => (await resolveOn(b, k.key)).status === 401);
    expect(ms).toBeGreaterThanOrEqual(LEAD_MS - 50);
    record("expiry (after its time)", ms - LEAD_MS);
    expect(ms - LEAD_MS).toBeLessThan(BOUND_MS);

    const old = await createKey("rotated");
    await until(old.createdAt, async () => (await resolveOn(b, old.key)).status === 200);
    const overlapEnd = Date.now() + LEAD_MS;
    const t0 = performance.now();
    const rot = await browser.request("POST", `/projects/${projectId}/keys/${old.id}/rotate`, {
      overlapUntil: new Date(overlapEnd).toISOString(),
    });
    expect(rot.status).toBe(201);
    const fresh = rot.json.data.key as string;
    const accepted = await until(t0, async () => (await resolveOn(b, fresh)).status === 200);
    record("rotation: new key on B", accepted);
    expect(accepted).toBeLessThan(BOUND_MS);
    expect((await resolveOn(b, old.key)).status).toBe(200);
    const ended = await until(t0, async () => (await resolveOn(b, old.key)).status === 401);
    expect(ended).toBeGreaterThanOrEqual(LEAD_MS - 50);
    record("rotation: old key after the overlap", ended - LEAD_MS);
    expect(ended - LEAD_MS).toBeLessThan(BOUND_MS);
    expect((await resolveOn(b, fresh)).status).toBe(200);
  });

  it("a project's settings changed on A are both processes' answers within 1 s", async () => {
    const k = await createKey("settings");
    await until(k.createdAt, async () => (await resolveOn(b, k.key)).status === 200);
    const before = await resolveOn(b, k.key);
    expect(before.status).toBe(200);
    const top = before.provider;
    expect(top).not.toBeNull();
    expect((await resolveOn(a, k.key)).provider).toBe(top);
    // Disabling the top answer's provider changes (or removes) the answer on both processes.
    const changed = async (s: ServerProcess) => (await resolveOn(s, k.key)).provider !== top;
    for (const [i, settings] of [{ providers: { disabled: [top] } }, {}].entries()) {
      const t0 = performance.now();
      const res = await browser.request("PUT", `/projects/${projectId}/settings`, settings);
      expect(res.status).toBe(200);
      const want = i === 0;
      const [msA, msB] = await Promise.all(
        [a, b].map((s) => until(t0, async () => (await changed(s)) === want)),
      );
      record("settingsA", msA);
      record("settingsB", msB);
      expect(Math.max(msA, msB)).toBeLessThan(BOUND_MS);
      // Steady afterwards on both.
      for (const s of [a, b]) expect(await changed(s)).toBe(want);
    }
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/load-config.js";
import { createStore } from "../store/create-store.js";
import type { Store } from "../store/store.js";
import { ProjectsRepo } from "./projects.repo.js";
import {
  API_KEY_PATTERN,
  createApiKey,
  createApiKeyVerifier,
  ensureDemoProject,
  generateApiKey,
  hashApiKey,
  keyPrefix,
} from "./api-keys.js";

const PEPPER = "0123456789abcdef0123456789abcdef";

describe("generateApiKey", () => {
  it("writes on_<8 hex>_<32 base62> with its readable prefix", () => {
    const { key, prefix } = generateApiKey();
    expect(key).toMatch(API_KEY_PATTERN);
    expect(key.startsWith(`${prefix}_`)).toBe(true);
    expect(keyPrefix(key)).toBe(prefix);
  });

  it("carries at least 128 random bits: no repeats, every base62 character in use", () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey().key);
    expect(new Set(keys).size).toBe(keys.length);
    const secretChars = new Set(keys.flatMap((k) => [...k.split("_")[2]]));
    expect(secretChars.size).toBe(62);
    expect(32 * Math.log2(62)).toBeGreaterThan(128);
  });

  it("hashes with HMAC-SHA-256 under the pepper", () => {
    const h = hashApiKey(PEPPER, "on_00000000_abc");
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(PEPPER, "on_00000000_abc")).toBe(h);
    expect(hashApiKey(`${PEPPER}x`, "on_00000000_abc")).not.toBe(h);
  });
});

describe("api keys in the store", () => {
  let dir: string;
  let store: Store;
  let now = 1_000_000;
  const clock = () => now;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-keys-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores only the keyed hash, never the plaintext", async () => {
    const p = await store.projects.createProject({ name: "hashing" });
    const { key, apiKey } = await createApiKey(store, PEPPER, p.id, "ci");
    const rows = await store.accounts
      .selectFrom("api_keys")
      .selectAll()
      .where("id", "=", apiKey.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(key.split("_")[2]);
    expect(rows[0].hash).toBe(hashApiKey(PEPPER, key));
    expect(rows[0].prefix).toBe(keyPrefix(key));
  });

  it("verifies a key, caches it, and stops accepting it within the TTL of a revocation", async () => {
    const p = await store.projects.createProject({ name: "revocation" });
    await store.projects.updateProjectSettings(p.id, { providerPriority: ["NAMESPACE_C"] });
    const { key, apiKey } = await createApiKey(store, PEPPER, p.id, "k");
    const v = createApiKeyVerifier({ store, pepper: PEPPER, clock, ttlMs: 2000 });
    expect(v.verifyCached(key)).toBeUndefined();
    const first = await v.verify(key);
    expect(first).toMatchObject({
      key: { id: apiKey.id, projectId: p.id },
      project: { name: "revocation", settings: { providerPriority: ["NAMESPACE_C"] } },
    });
    // Cached: the same parsed settings object, no lookup.
    expect(v.verifyCached(key)?.project.settings).toBe(first?.project.settings);
    await store.projects.revokeApiKey(apiKey.id, now);
    expect(v.verifyCached(key)).not.toBeNull(); // still within the TTL
    now += 2001;
    expect(v.verifyCached(key)).toBeUndefined();
    expect(await v.verify(key)).toBeNull();
  });

  it("applies a TTL that shrinks while the key is cached (the change channel going down)", async () => {
    const p = await store.projects.createProject({ name: "channel down" });
    const { key, apiKey } = await createApiKey(store, PEPPER, p.id, "k");
    let channelUp = true;
    const v = createApiKeyVerifier({
      store,
      pepper: PEPPER,
      clock,
      ttlMs: () => (channelUp ? 60_000 : 1_000),
    });
    await v.verify(key);
    await store.projects.revokeApiKey(apiKey.id, now);
    now += 1_001;
    expect(v.verifyCached(key)).not.toBeNull(); // the channel is up: the cache answers
    channelUp = false;
    expect(v.verifyCached(key)).toBeUndefined(); // older than the fallback TTL: looked up again
    expect(await v.verify(key)).toBeNull();
  });

  it("does not cache a lookup that an invalidation overtook", async () => {
    const p = await store.projects.createProject({ name: "race" });
    const { key, apiKey } = await createApiKey(store, PEPPER, p.id, "k");
    const v = createApiKeyVerifier({ store, pepper: PEPPER, clock, ttlMs: 60_000 });
    const pending = v.verify(key);
    v.invalidateKey(apiKey.id);
    expect(await pending).not.toBeNull();
    expect(v.verifyCached(key)).toBeUndefined();
  });

  it("forgets a key at once on invalidateKey / invalidateProject", async () => {
    const p = await store.projects.createProject({ name: "invalidate" });
    const { key, apiKey } = await createApiKey(store, PEPPER, p.id, "k");
    const v = createApiKeyVerifier({ store, pepper: PEPPER, clock, ttlMs: 60_000 });
    await v.verify(key);
    await store.projects.revokeApiKey(apiKey.id, now);
    v.invalidateKey(apiKey.id);
    expect(await v.verify(key)).toBeNull();
    const { key: k2 } = await createApiKey(store, PEPPER, p.id, "k2");
    await v.verify(k2);
    await store.projects.updateProjectSettings(p.id, { includeExpired: true });
    v.invalidateProject(p.id);
    expect((await v.verify(k2))?.project.settings).toEqual({ includeExpired: true });
  });

  it("refuses implausible and unknown keys, and caches the refusal", async () => {
    const v = createApiKeyVerifier({ store, pepper: PEPPER, clock });
    expect(v.verifyCached("short")).toBeNull();
    expect(v.verifyCached("x".repeat(10_000))).toBeNull();
    const unknown = generateApiKey().key;
    expect(await v.verify(unknown)).toBeNull();
    expect(v.verifyCached(unknown)).toBeNull();
  });

  it("shares one lookup between concurrent first requests", async () => {
    const p = await store.projects.createProject({ name: "concurrent" });
    const { key } = await createApiKey(store, PEPPER, p.id, "k");
    const v = createApiKeyVerifier({ store, pepper: PEPPER, clock });
    const all = await Promise.all(Array.from({ length: 20 }, () => v.verify(key)));
    expect(new Set(all).size).toBe(1);
    expect(all[0]).not.toBeNull();
  });

  it("ensureDemoProject is idempotent and registers the configured demo key once", async () => {
    const config = loadConfig({}, { dataDir: dir, demoApiKey: "demo-key-0123456789" });
    const a = await ensureDemoProject({ store, pepper: PEPPER, config });
    const b = await ensureDemoProject({ store, pepper: PEPPER, config });
    expect(a.project.id).toBe(b.project.id);
    expect(a.registered && b.registered).toBe(true);
    expect(await store.projects.listApiKeys(a.project.id)).toHaveLength(1);
    const v = createApiKeyVerifier({ store, pepper: PEPPER, clock });
    expect((await v.verify("demo-key-0123456789"))?.project.name).toBe("demo");
    // Revoked by an operator: it stays revoked.
    const [demo] = await store.projects.listApiKeys(a.project.id);
    await store.projects.revokeApiKey(demo.id, now);
    expect((await ensureDemoProject({ store, pepper: PEPPER, config })).registered).toBe(false);
    const noKey = await ensureDemoProject({
      store,
      pepper: PEPPER,
      config: loadConfig({}, { dataDir: dir }),
    });
    expect(noKey).toMatchObject({ project: { name: "demo" }, registered: false });
  });

  it("puts the demo project on the demo plan, moving one left on another plan, else on the default plan", async () => {
    const config = loadConfig({}, { dataDir: dir });
    const { project } = await ensureDemoProject({ store, pepper: PEPPER, config });
    expect(project.plan).toBe("demo");
    await new ProjectsRepo(store.accounts).setPlan(project.id, "free");
    expect((await ensureDemoProject({ store, pepper: PEPPER, config })).project.plan).toBe("demo");
    expect((await store.projects.findProjectByName("demo"))?.plan).toBe("demo");
    const { demo: _, ...withoutDemo } = config.plans;
    const other = { ...config, plans: withoutDemo, defaultPlan: "pro" };
    expect((await ensureDemoProject({ store, pepper: PEPPER, config: other })).project.plan).toBe("pro");
  });
});

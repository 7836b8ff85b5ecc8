// A settings change's winner.changed events, appended by a job page by page (settings-winner-jobs.ts):
// resumed after a crash between pages, raced by two processes, each event exactly once.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dryRunSettings } from "../../src/accounts/settings-dry-run.js";
import { runSettingsWinnerJobs } from "../../src/workers/settings-winner-jobs.js";
import type { ChangeEvent } from "../../src/domain/change-events.js";
import type { DomainWrite } from "../../src/domain/types.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { createProject, signedIn } from "../console/helpers/accounts.js";
import { type ConsoleTestApp, createConsoleTestApp } from "../console/helpers/console-app.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const NOW = 1_800_000_000_000;
const A_FIRST = { providerPriority: ["NAMESPACE_A", "NAMESPACE_B", "NAMESPACE_C"] };
/** B first and BSC off: the BSC names (phase 0) and every A/B collision (phase 1) move. */
const B_FIRST_NO_BSC = {
  providerPriority: ["NAMESPACE_B", "NAMESPACE_A", "NAMESPACE_C"],
  networks: { disabled: ["BSC"] },
};
const PAGE = 4;

let token = 0;
const on = (name: string, provider: DomainWrite["provider"], network: DomainWrite["network"]) =>
  testDomain({
    name,
    sld: name.split(".")[0]!,
    tld: "wallet",
    provider,
    network,
    tokenId: tokenIdOf(++token),
  });

/** 21 A/B collisions, 6 BSC/B collisions, 3 names held on BSC only, 5 single holders nothing moves. */
async function seed(store: Store): Promise<void> {
  for (let i = 0; i < 21; i++) {
    await store.domainMap.upsertDomain(on(`n${i}.wallet`, "NAMESPACE_A", "POLYGON"));
    await store.domainMap.upsertDomain(on(`n${i}.wallet`, "NAMESPACE_B", "ETHEREUM"));
  }
  for (let i = 0; i < 6; i++) {
    await store.domainMap.upsertDomain(on(`m${i}.wallet`, "NAMESPACE_A", "BSC"));
    await store.domainMap.upsertDomain(on(`m${i}.wallet`, "NAMESPACE_B", "ETHEREUM"));
  }
  for (let i = 0; i < 3; i++) await store.domainMap.upsertDomain(on(`s${i}.wallet`, "NAMESPACE_A", "BSC"));
  for (let i = 0; i < 5; i++)
    await store.domainMap.upsertDomain(on(`q${i}.wallet`, "NAMESPACE_A", "POLYGON"));
}

/** What an event says, without its id and write time. */
const shown = (e: ChangeEvent) => ({
  name: e.name,
  tld: e.tld,
  provider: e.provider,
  network: e.network,
  tokenId: e.tokenId,
  blockNumber: e.blockNumber,
  txHash: e.txHash,
  payload: e.payload,
});

async function eventsOf(store: Store, projectId: number): Promise<ChangeEvent[]> {
  const out: ChangeEvent[] = [];
  for (let after = 0; ; ) {
    const page = await store.changeLog.findChangeEventsAfter(after, 500);
    if (page.length === 0) return out;
    out.push(...page.filter((e) => e.type === "winner.changed" && e.projectId === projectId));
    after = page[page.length - 1]!.id;
  }
}

describe.each(STORE_BACKENDS)("settings winner.changed jobs ($name)", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let second: () => Promise<Store>;
  const ranker = createScoringRanker();
  const deps = (s: Store) => ({ store: s, ranker, clock: () => NOW + 5 });
  let reference: ReturnType<typeof shown>[];

  const job = async (projectId: number) => {
    await store.winnerJobs.appendSettingsWinnerJob({
      projectId,
      settingsBefore: A_FIRST,
      settingsAfter: B_FIRST_NO_BSC,
      rankAt: NOW,
      createdAt: NOW,
    });
  };

  beforeAll(async () => {
    ({ store, cleanup, second } = await backend.open());
    await seed(store);
    // The reference: one runner, uninterrupted.
    const p = await store.projects.createProject({ name: "reference" });
    await job(p.id);
    const run = await runSettingsWinnerJobs(deps(store), { pageSize: PAGE });
    reference = (await eventsOf(store, p.id)).map(shown);
    expect(run.events).toBe(reference.length);
    expect(await store.winnerJobs.findNextSettingsWinnerJob()).toBeNull();
  });
  afterAll(async () => {
    await cleanup();
  });

  it("appends one event per name the dry run lists, in pages, shaped as before (cause settings, no block)", async () => {
    const dry = await dryRunSettings({ store, ranker }, A_FIRST, B_FIRST_NO_BSC, NOW);
    // 21 + 6 collisions and 3 BSC-only names move; the 5 single POLYGON holders do not.
    expect(dry.changed).toBe(30);
    expect(reference).toHaveLength(30);
    expect(new Set(reference.map((e) => e.name)).size).toBe(30);
    expect(reference.map((e) => e.name).sort()).toEqual(dry.names.map((n) => n.name).sort());
    const n0 = reference.find((e) => e.name === "n0.wallet")!;
    expect(n0).toMatchObject({
      tld: "wallet",
      provider: "NAMESPACE_B",
      network: "ETHEREUM",
      txHash: null,
      payload: {
        cause: "settings",
        winner: { from: { provider: "NAMESPACE_A" }, to: { provider: "NAMESPACE_B" } },
      },
    });
    expect(reference.find((e) => e.name === "s0.wallet")!.payload.winner?.to).toBeNull();
  });

  it("resumes after a crash between pages and one in a page: each event once, as an uninterrupted run", async () => {
    const p = await store.projects.createProject({ name: "crashed" });
    await job(p.id);
    // The first runner appends one page and is dropped.
    expect(await runSettingsWinnerJobs(deps(store), { pageSize: PAGE, maxPages: 1 })).toEqual({
      pages: 1,
      events: expect.any(Number),
      failures: 0,
    });
    const after1 = await store.winnerJobs.findNextSettingsWinnerJob();
    expect(after1).toMatchObject({ projectId: p.id, pages: 1, finishedAt: null });
    // The second ranks a page and dies before its transaction.
    let asked = 0;
    const killed = await runSettingsWinnerJobs(deps(store), { pageSize: PAGE, stopped: () => ++asked > 1 });
    expect(killed.pages).toBe(0);
    expect((await store.winnerJobs.findNextSettingsWinnerJob())?.pages).toBe(1);
    // A restarted process, on a connection of its own, finishes the job.
    const other = await second();
    try {
      await runSettingsWinnerJobs(deps(other), { pageSize: PAGE });
    } finally {
      await other.close();
    }
    expect(await store.winnerJobs.findNextSettingsWinnerJob()).toBeNull();
    expect((await eventsOf(store, p.id)).map(shown)).toEqual(reference);
  });

  it("three runners racing on one job append each page once", async () => {
    const p = await store.projects.createProject({ name: "raced" });
    await job(p.id);
    // PostgreSQL: three connections, as three processes. SQLite serves one process (its writers
    // on other connections wait on the file lock, which a synchronous driver cannot wait out in
    // one process): three runners on its one connection, interleaved at every await.
    const others = backend.name === "postgres" ? [await second(), await second()] : [];
    const stores = others.length > 0 ? [store, ...others] : [store, store, store];
    try {
      const runs = await Promise.all(stores.map((s) => runSettingsWinnerJobs(deps(s), { pageSize: PAGE })));
      const events = (await eventsOf(store, p.id)).map(shown);
      expect(events).toEqual(reference);
      expect(runs.reduce((n, r) => n + r.events, 0)).toBe(reference.length);
      const [row] = (
        await sql<{ pages: number | string }>`select pages from settings_winner_jobs
          where project_id = ${p.id}`.execute(store.accounts)
      ).rows;
      // Every page committed once, plus the finish.
      expect(runs.reduce((n, r) => n + r.pages, 0) + 1).toBe(Number(row!.pages));
    } finally {
      for (const s of others) await s.close();
    }
  });

  it("runs the jobs of one project in order, and a deleted project's job ends without events", async () => {
    const p = await store.projects.createProject({ name: "twice" });
    const back = { before: B_FIRST_NO_BSC, after: A_FIRST };
    await job(p.id);
    await store.winnerJobs.appendSettingsWinnerJob({
      projectId: p.id,
      settingsBefore: back.before,
      settingsAfter: back.after,
      rankAt: NOW,
      createdAt: NOW,
    });
    const gone = await store.projects.createProject({ name: "gone" });
    await job(gone.id);
    await store.transaction((tx) => tx.accounts.deleteFrom("projects").where("id", "=", gone.id).execute());
    await runSettingsWinnerJobs(deps(store), { pageSize: PAGE });
    const events = await eventsOf(store, p.id);
    // The first change's 30 events, then the way back's 30, each name's pair in that order.
    expect(events.slice(0, 30).map(shown)).toEqual(reference);
    expect(events.slice(30).map((e) => e.payload.winner?.to?.provider ?? null)).not.toContain("NAMESPACE_B");
    expect(events).toHaveLength(60);
    expect(await eventsOf(store, gone.id)).toEqual([]);
    expect(await store.winnerJobs.findNextSettingsWinnerJob()).toBeNull();
  });

  it("prunes finished jobs older than the cut, never an unfinished one", async () => {
    const p = await store.projects.createProject({ name: "pruned" });
    await job(p.id);
    const count = async () =>
      Number(
        (
          await sql<{ n: number | string }>`select count(*) as n from settings_winner_jobs`.execute(
            store.accounts,
          )
        ).rows[0]!.n,
      );
    const all = await count();
    expect(await store.winnerJobs.pruneSettingsWinnerJobs(NOW + 6)).toBe(all - 1);
    expect(await count()).toBe(1);
    expect((await store.winnerJobs.findNextSettingsWinnerJob())?.projectId).toBe(p.id);
    await runSettingsWinnerJobs(deps(store), { pageSize: PAGE });
    expect(await store.winnerJobs.pruneSettingsWinnerJobs(NOW + 6)).toBe(1);
  });

  it("a page that always throws is retried later, other projects' jobs go on, and it gives up after its last attempt", async () => {
    const poisoned = await store.projects.createProject({ name: "poisoned" });
    const other = await store.projects.createProject({ name: "other" });
    const POISON = { ...B_FIRST_NO_BSC, poison: true };
    // The poisoned project's job throws on every page; its second job and another project's do not.
    await store.winnerJobs.appendSettingsWinnerJob({
      projectId: poisoned.id,
      settingsBefore: A_FIRST,
      settingsAfter: POISON,
      rankAt: NOW,
      createdAt: NOW,
    });
    await job(poisoned.id);
    await job(other.id);
    const throwing: typeof ranker = {
      rank: (c, ctx) => {
        if (ctx.projectSettings.poison === true) throw new Error("ranking failed: poisoned settings");
        return ranker.rank(c, ctx);
      },
    };
    const retry = { maxAttempts: 3, baseMs: 1_000, maxMs: 1_500 };
    let now = NOW + 5;
    const failed: { attempts: number; retryAt: number | null; failedAt: number | null; error: string }[] = [];
    const pass = () =>
      runSettingsWinnerJobs(
        { store, ranker: throwing, clock: () => now },
        { pageSize: PAGE, retry, onFailure: (f) => failed.push(f) },
      );
    // First pass: the poisoned job fails once and waits; its project's second job waits behind it;
    // the other project's job runs whole.
    expect((await pass()).failures).toBe(1);
    expect((await eventsOf(store, other.id)).map(shown)).toEqual(reference);
    expect(await eventsOf(store, poisoned.id)).toEqual([]);
    expect(failed).toEqual([
      expect.objectContaining({
        attempts: 1,
        retryAt: now + 1_000,
        failedAt: null,
        error: expect.stringContaining("poisoned settings"),
      }),
    ]);
    // Before its retry time nothing runs; at it, the second attempt (delay doubled, capped at 1.5 s).
    now += 999;
    expect(await pass()).toEqual({ pages: 0, events: 0, failures: 0 });
    now += 1;
    expect((await pass()).failures).toBe(1);
    expect(failed[1]).toMatchObject({ attempts: 2, retryAt: now + 1_500, failedAt: null });
    const waiting = await store.winnerJobs.findNextSettingsWinnerJob();
    expect(waiting).toMatchObject({ projectId: poisoned.id, attempts: 2, finishedAt: null, failedAt: null });
    expect(waiting?.lastError).toContain("poisoned settings");
    // The last attempt gives up: the job is finished as failed, and the project's next job runs.
    now += 1_500;
    expect((await pass()).failures).toBe(1);
    expect(failed[2]).toMatchObject({ attempts: 3, retryAt: null, failedAt: now });
    expect((await eventsOf(store, poisoned.id)).map(shown)).toEqual(reference);
    expect(await store.winnerJobs.findNextSettingsWinnerJob()).toBeNull();
    const [row] = (
      await sql<{ failed_at: number | string | null; finished_at: number | string | null }>`select failed_at,
        finished_at from settings_winner_jobs where project_id = ${poisoned.id} order by id limit 1`.execute(
        store.accounts,
      )
    ).rows;
    expect(Number(row!.failed_at)).toBe(now);
    expect(Number(row!.finished_at)).toBe(now);
  });
});

describe("settings saves append a job, bad input none", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({ backend: "sqlite" });
  });
  afterAll(async () => {
    await t?.close();
  });
  const jobs = async () =>
    (
      await sql<{ project_id: number | string; settings_after: string }>`select project_id, settings_after
        from settings_winner_jobs order by id`.execute(t.store.accounts)
    ).rows.map((r) => [Number(r.project_id), JSON.parse(r.settings_after)]);

  it("a valid PUT appends one job with the settings before and after; a refused one, or one that changes nothing, appends none", async () => {
    const o = await signedIn(t, "jobs-owner");
    const p = await createProject(t, [{ id: o.id, role: "owner" }]);
    const before = await jobs();
    const json = { "content-type": "application/json" };
    for (const body of [
      JSON.stringify({ providers: { disabled: ["NOPE"] } }),
      JSON.stringify({ exceptions: Array.from({ length: 10_001 }, (_, i) => ({ domain: `d${i}.x` })) }),
      '{"__proto__":{"includeExpired":true},"providerPriority":[{"$ne":1}]}',
      "[]",
      "{not json",
    ]) {
      const res = await o.agent.request("PUT", `projects/${p.id}/settings`, body, json);
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body).toBeLessThan(500);
    }
    // The settings the project has already: a 200, and no job (nothing can change winner).
    expect((await o.agent.put(`projects/${p.id}/settings`, {})).statusCode).toBe(200);
    expect((await jobs()).slice(before.length)).toEqual([]);
    const ok = await o.agent.put(`projects/${p.id}/settings`, { includeExpired: true });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await jobs()).slice(before.length)).toEqual([[p.id, { includeExpired: true }]]);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createSnsSync } from "../../src/crawler/sns-sync.js";
import { createSource } from "../../src/crawler/sources.js";
import { findDevnetManifest, solanaOfManifest, sourcesFromManifest } from "../../src/devnet/manifest.js";
import { SNS_MAINNET } from "../../src/providers/sns/sns.adapter.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { crawlToHead, rpcCall, tempStore, waitFor } from "../crawler/crawler-harness.js";
import { type OutputProcess, spawnWithOutput } from "../helpers/processes.js";
import { NEUTRAL_SNS_SIGNALS } from "../helpers/sns-world.js";

const main = new URL("../../src/main.ts", import.meta.url).pathname;
// Seconds of simulation before each kill: early, mid-way, and late enough that a chain which saves
// its state only now and then (anvil's own dumps: every 60 s) would lose more blocks than BSC's
// and AURORA's 30-block finality windows.
const KILL_AFTER_S = [4, 12, 40];

type Proc = OutputProcess;

/** `omniname <args>` in a process group of its own (killing the group kills its anvils too). */
function run(args: string[], dataDir: string): Proc {
  return spawnWithOutput(["--import", "tsx", main, ...args], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info", DATABASE_URL: "" },
    detached: true,
  });
}

const exited = (p: Proc) =>
  new Promise<void>((resolve) =>
    p.child.exitCode !== null ? resolve() : p.child.once("exit", () => resolve()),
  );

async function startInstance(dataDir: string): Promise<Proc & { url: string }> {
  const p = run(["start"], dataDir);
  const url = await waitFor(
    async () => {
      if (p.child.exitCode !== null) throw new Error(`exited:\n${p.output()}`);
      return /omniname is up: (http:\/\/[^\s]+)\/svc\/api\/v1/.exec(p.output())?.[1] ?? null;
    },
    90_000,
    "omniname is up",
  );
  return { ...p, url };
}

/** Every domain with its owner and records, as sorted lines. */
async function namesOf(store: Store): Promise<string[]> {
  const out: string[] = [];
  for await (const page of store.domainMap.iterateDomains(500))
    for (const d of page)
      out.push(
        `${d.network}/${d.provider}/${d.name} owner=${d.owner} records=${JSON.stringify([...d.records].map((r) => [r.key, r.value]).sort())}`,
      );
  return out.sort();
}

describe("a crash of the whole `omniname start` during a simulation", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-crash-e2e-"));
  const procs: Proc[] = [];
  afterAll(async () => {
    for (const p of procs)
      if (p.child.exitCode === null && p.child.pid) {
        try {
          process.kill(-p.child.pid, "SIGKILL");
        } catch {}
      }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("comes back after each kill -9 with every name as on the chain, no source halted", async () => {
    // A first start and a clean stop: the chains' state is saved, so later starts resume it.
    const first = await startInstance(dataDir);
    procs.push(first);
    first.child.kill("SIGTERM");
    await exited(first);
    expect(first.child.exitCode).toBe(0);

    for (const seconds of KILL_AFTER_S) {
      const instance = await startInstance(dataDir);
      procs.push(instance);
      const sim = run(["devnet", "simulate", "--rate", "10"], dataDir);
      procs.push(sim);
      await waitFor(async () => /simulating 10 ops\/s/.test(sim.output()), 30_000, "the simulation");
      await new Promise((r) => setTimeout(r, seconds * 1000));
      // The first kill is a user's `kill -9 <pid>` (the process alone: its anvils must end with it,
      // or the next start finds the devnet still running); the others kill the whole group.
      if (seconds === KILL_AFTER_S[0]) process.kill(instance.child.pid!, "SIGKILL");
      else process.kill(-instance.child.pid!, "SIGKILL");
      await exited(instance);
      // Not SIGTERM: the simulator's own stop waits 1.5 s for its last receipts, from chains that
      // are gone with the instance.
      sim.child.kill("SIGKILL");
      await exited(sim);
    }

    const instance = await startInstance(dataDir);
    procs.push(instance);
    const manifest = findDevnetManifest(dataDir)!;
    const sources = sourcesFromManifest(manifest);
    // Synced: every source live and at (or past) the head each chain had once the restart was up.
    const heads = new Map<string, number>();
    for (const s of sources) heads.set(s.id, Number(await rpcCall<string>(s.rpcUrl, "eth_blockNumber")));
    // The devnet's Solana and its SNS source (the simulation changes .sol names too).
    const solana = solanaOfManifest(manifest);
    const sns = solana && createSource("NAMESPACE_D", "SOLANA", SNS_MAINNET.SOLANA, solana.rpcUrl);
    if (sns) heads.set(sns.id, await rpcCall<number>(sns.rpcUrl, "getSlot"));
    const status = await waitFor(
      async () => {
        const body = (await (await fetch(`${instance.url}/status`)).json()) as {
          data: { sources: Array<{ id: string; state: string; checkpoint: number; error: string | null }> };
        };
        const all = body.data.sources;
        if (all.some((s) => s.state === "halted")) return all;
        return all.every((s) => s.state === "live" && s.checkpoint >= heads.get(s.id)!) ? all : null;
      },
      30_000,
      "every source synced",
    );
    expect(status.filter((s) => s.state !== "live")).toEqual([]);
    expect((await fetch(`${instance.url}/readyz`)).status).toBe(200);

    // The chain's truth: a fresh crawl of the same chains, now, into an empty store.
    const fresh = await tempStore();
    const served = createSqliteStore(join(dataDir, "omniname.db"));
    try {
      await crawlToHead(fresh.store, sources);
      if (sns)
        await createSnsSync({
          source: sns,
          store: fresh.store,
          signals: NEUTRAL_SNS_SIGNALS,
          log: pino({ level: "silent" }),
        }).scanOnce();
      const expected = await namesOf(fresh.store);
      expect(expected.length).toBeGreaterThan(100);
      expect(await namesOf(served)).toEqual(expected);
    } finally {
      await served.close();
      await fresh.cleanup();
    }
    expect(instance.output()).not.toMatch(/Warning/);
    expect(instance.output()).not.toMatch(/halted/);
  }, 360_000);
});

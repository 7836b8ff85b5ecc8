// The SNS source under a source lease, as the crawler role runs it (startSnsSource): two crawler
// processes' sources over one store write one at a time; when the writer stops, the standby takes
// the lease over and follows the next change. On SQLite and PostgreSQL.
import pino from "pino";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSnsSource } from "../../src/cli/sns-source.js";
import { loadConfig } from "../../src/config/load-config.js";
import type { LeaseOptions } from "../../src/crawler/source-lease.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import type { Store } from "../../src/store/store.js";
import { NEUTRAL_SNS_SIGNALS, type SnsEndpoint, snsMapOf, startSnsEndpoint } from "../helpers/sns-world.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

const until = async (what: string, ok: () => Promise<boolean> | boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe.each(STORE_BACKENDS)("the SNS source under a lease on $name", ({ open }) => {
  let sns: SnsEndpoint;
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    sns = await startSnsEndpoint({ hostile: false });
    ({ store, cleanup } = await open());
  });
  afterAll(async () => {
    await cleanup?.();
    await sns?.close();
  });

  it("has one writer of two processes, and the standby takes over and follows the chain", async () => {
    const config = loadConfig(
      {},
      { rpcUrlSolana: sns.rpc.url, crawlerPollIntervalMs: 200, crawlerNewHeads: false },
    );
    const lease = (holder: string): LeaseOptions => ({ holder, ttlMs: 1_500, renewMs: 200 });
    const log = pino({ level: "silent" });
    const start = (holder: string) =>
      startSnsSource(
        { config, store, ranker: createScoringRanker(), clock: Date.now },
        log,
        NEUTRAL_SNS_SIGNALS,
        false,
        null,
        lease(holder),
      )!;
    const a = start("crawler-a");
    await until("a writes", () => a.status().state === "live");
    const b = start("crawler-b");
    const roles = () => [a, b].map((s) => (s.status() as { lease?: { role: string } }).lease?.role);
    await until("b stands by", () => b.status().state === "standby");
    expect(roles()).toEqual(["writer", "standby"]);
    const seeded = await snsMapOf(store);
    expect(seeded.some((l) => l.includes('"alice.sol"'))).toBe(true);

    // The writer stops (its lease is given up): b writes from the map a left.
    a.stop();
    await a.running;
    await until("b writes", () => b.status().state === "live");
    expect((b.status() as { lease?: { holder: string } }).lease?.holder).toBe("crawler-b");
    sns.writer.transfer("alice.sol", SNS_WALLETS.bob);
    await until("the transfer in the map", async () =>
      (await store.domainMap.findDomainsByName(["alice.sol"], {})).some(
        (d) => d.provider === "NAMESPACE_D" && d.owner === SNS_WALLETS.bob,
      ),
    );
    // The lease row names the writer; a stopped writer gives it up.
    const leases = await store.crawlerLog.listSourceLeases();
    expect(leases.map((l) => [l.sourceId, l.holder])).toEqual([["sns-solana", "crawler-b"]]);
    b.stop();
    await b.running;
    expect(await store.crawlerLog.listSourceLeases()).toEqual([]);
  }, 60_000);
});

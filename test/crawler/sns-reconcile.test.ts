import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "@solana/kit";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NEUTRAL_SNS_SIGNALS, type SnsEndpoint, startSnsEndpoint } from "../helpers/sns-world.js";
import { waitFor } from "./crawler-harness.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { SNS_PROGRAMS } from "../../src/providers/sns/sns-program.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createSnsSync } from "../../src/crawler/sns-sync.js";
import { createSolanaReader, type SolanaReader } from "../../src/crawler/solana-reader.js";

// The full pass is a slow reconciliation while the subscriptions are live (docs/sns.md); the poll
// interval paces it without them.
describe("the SNS source's full pass", () => {
  let sns: SnsEndpoint;
  let dir: string;
  const stores: Store[] = [];
  /** The reader's getProgramAccounts of the whole `.sol` root: one per full pass. */
  let rootReads = 0;
  let counting: SolanaReader;
  const ms = (n: number) => new Promise((r) => setTimeout(r, n));

  beforeAll(async () => {
    sns = await startSnsEndpoint({ hostile: false });
    dir = mkdtempSync(join(tmpdir(), "omniname-sns-reconcile-"));
    const real = createSolanaReader(sns.rpc.url);
    counting = {
      ...real,
      nftHolder: (mint) => real.nftHolder(mint),
      programAccounts(program, filters) {
        if (filters.some((f) => "memcmp" in f && f.memcmp.bytes === SNS_PROGRAMS.solRoot)) rootReads++;
        return real.programAccounts(program, filters);
      },
    };
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await sns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const run = async (wsUrl: string | null) => {
    const store = await createStore({ databaseUrl: undefined, dataDir: mkdtempSync(join(dir, "s-")) });
    stores.push(store);
    const sync = createSnsSync({
      source: sns.source,
      store,
      signals: NEUTRAL_SNS_SIGNALS,
      log: pino({ level: "silent" }),
      reader: counting,
      wsUrl,
      pollIntervalMs: 100,
      reconcileIntervalMs: 600_000,
    });
    return { store, sync, running: sync.run() };
  };

  it("waits for the reconcile interval while notifications cover every change, and still follows them", async () => {
    const { store, sync, running } = await run(sns.rpc.wsUrl);
    try {
      // Settled: the subscriptions and NFT watches acknowledged, a full pass since.
      let before = -1;
      await waitFor(
        async () => {
          const seen = rootReads;
          await ms(500);
          if (rootReads !== seen) return null;
          before = rootReads;
          return true;
        },
        10_000,
        "the full passes to stop",
      );
      sns.writer.transfer("carol.sol", SNS_WALLETS.eve as Address);
      await waitFor(
        async () =>
          (await store.domainMap.findDomainsByName(["carol.sol"], { network: "SOLANA" }))[0]?.owner ===
          SNS_WALLETS.eve,
        10_000,
        "the notified transfer in the map",
      );
      await ms(500);
      expect(rootReads).toBe(before);
    } finally {
      sync.stop();
      await running;
    }
  });

  it("polls at the poll interval without a WebSocket", async () => {
    const { sync, running } = await run(null);
    try {
      await waitFor(async () => rootReads > 0, 10_000, "a first pass");
      const before = rootReads;
      await ms(1_000);
      expect(rootReads - before).toBeGreaterThanOrEqual(3);
    } finally {
      sync.stop();
      await running;
    }
  });
});

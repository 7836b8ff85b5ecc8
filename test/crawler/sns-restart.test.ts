import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSolanaLedger } from "../../src/devnet/solana-ledger.js";
import { type SolanaRpc, startSolanaRpc } from "../../src/devnet/solana-rpc.js";
import { SNS_WALLETS, seedSnsWorld } from "../../src/devnet/sns-fixtures.js";
import { createSnsWriter } from "../../src/devnet/sns-writer.js";
import { SNS_MAINNET } from "../../src/providers/sns/sns.adapter.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createSnsSync } from "../../src/crawler/sns-sync.js";
import { createSource } from "../../src/crawler/sources.js";
import { snsMapOf } from "../helpers/sns-world.js";

const NEUTRAL = () => ({ baseScore: 50, spam: false, csamOk: true, kyc: false, tags: [] as string[] });
const log = pino({ level: "silent" });

describe("the SNS source across restarts", () => {
  let rpc: SolanaRpc;
  const ledger = createSolanaLedger();
  const writer = createSnsWriter(ledger);
  const dirs: string[] = [];
  const stores: Store[] = [];
  const newStore = async () => {
    const dir = mkdtempSync(join(tmpdir(), "omniname-sns-"));
    dirs.push(dir);
    const store = await createStore({ databaseUrl: undefined, dataDir: dir });
    stores.push(store);
    return store;
  };
  const syncOf = (store: Store) =>
    createSnsSync({
      source: { ...createSource("NAMESPACE_D", "SOLANA", SNS_MAINNET.SOLANA, ""), rpcUrl: rpc.url },
      store,
      signals: NEUTRAL,
      log,
    });

  beforeAll(async () => {
    rpc = await startSolanaRpc(ledger);
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await rpc?.close();
  });

  it("builds, over a restart in the middle of the world's changes, the map an uninterrupted source builds", async () => {
    const interrupted = await newStore();
    writer.register("early.sol", SNS_WALLETS.bob);
    writer.setRecordV2("early.sol", "url", new Uint8Array(Buffer.from("https://early.example")));
    await syncOf(interrupted).scanOnce();
    // The first process is gone (its pass committed or not at all: one transaction); the world
    // goes on, and a new process starts on the same store.
    seedSnsWorld(writer);
    writer.remove("early.sol");
    const restarted = syncOf(interrupted);
    const first = await restarted.scanOnce();
    expect(first.released).toBe(1);
    const uninterrupted = await newStore();
    await syncOf(uninterrupted).scanOnce();
    expect(await snsMapOf(interrupted)).toEqual(await snsMapOf(uninterrupted));
    expect((await snsMapOf(uninterrupted)).length).toBeGreaterThan(5);
  });

  it("journals nothing again after a restart over unchanged accounts (the map is its memory)", async () => {
    const store = await newStore();
    await syncOf(store).scanOnce();
    const again = await syncOf(store).scanOnce();
    expect(again.changed).toBe(0);
    expect(again.released).toBe(0);
  });

  it("follows a change as soon as the name service notifies it over the WebSocket", async () => {
    const store = await newStore();
    const sync = createSnsSync({
      source: { ...createSource("NAMESPACE_D", "SOLANA", SNS_MAINNET.SOLANA, ""), rpcUrl: rpc.url },
      store,
      signals: NEUTRAL,
      log,
      wsUrl: rpc.wsUrl,
      // Longer than the test's own timeout: only a notification can bring the change in time.
      pollIntervalMs: 3_600_000,
    });
    const running = sync.run();
    try {
      await until(async () => (await store.domainMap.findDomainsByName(["alice.sol"], {})).length > 0);
      writer.transfer("alice.sol", SNS_WALLETS.dave);
      await until(
        async () =>
          (await store.domainMap.findDomainsByName(["alice.sol"], {}))[0]?.owner === SNS_WALLETS.dave,
      );
    } finally {
      sync.stop();
      await running;
    }
  });
});

async function until(check: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

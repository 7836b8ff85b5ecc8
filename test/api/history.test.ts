import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { reproject } from "../../src/crawler/reproject.js";
import { createSource } from "../../src/crawler/sources.js";
import { ZERO_ADDRESS } from "../../src/domain/address.js";
import type { DomainEvent } from "../../src/providers/provider.js";
import type { JournalEntry } from "../../src/store/crawler-log.port.js";
import type { Store } from "../../src/store/store.js";
import { NEUTRAL_SIGNALS } from "../crawler/crawler-harness.js";
import { ALICE, BOB } from "../helpers/store-world.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";
import { NOW } from "./helpers/world.js";

/**
 * Time travel (`at`, `atBlock`) and provenance on the three endpoints, over a journal written the
 * way the crawler writes it and projected by the crawler's own reproject: the map holds today's
 * state, the journal the history the answers are rebuilt from.
 */

const FNS: CrawlerSource = createSource(
  "NAMESPACE_A",
  "POLYGON",
  { addresses: {}, startBlock: 0 },
  "http://127.0.0.1:1",
);
const CONTRACT = "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65";
const ALICE_WALLET = FNS.adapter.tokenIdOf("alice.wallet");
const BOB_WALLET = FNS.adapter.tokenIdOf("bob.wallet");
/** Epoch seconds of block n: one block a minute, block 0 a day before NOW. */
const timeOf = (block: number) => Math.floor(NOW / 1000) - 86_400 + block * 60;
const iso = (block: number) => new Date(timeOf(block) * 1000).toISOString();
const hashOf = (block: number) => `0x${block.toString(16).padStart(64, "b")}`;
const txOf = (block: number, i: number) => `0x${(block * 100 + i).toString(16).padStart(64, "7")}`;

/** alice.wallet: minted to ALICE at 10, record changed and sold to BOB at 20, burned at 30. bob.wallet: minted at 12, lives. */
const HISTORY: Array<[number, DomainEvent]> = [
  [10, { type: "transfer", tokenId: ALICE_WALLET, from: ZERO_ADDRESS, to: ALICE }],
  [10, { type: "name", tokenId: ALICE_WALLET, name: "alice.wallet" }],
  [10, { type: "record", tokenId: ALICE_WALLET, nativeKey: "record.A.0", nativeValue: "192.0.2.1" }],
  [12, { type: "transfer", tokenId: BOB_WALLET, from: ZERO_ADDRESS, to: BOB }],
  [12, { type: "name", tokenId: BOB_WALLET, name: "bob.wallet" }],
  [12, { type: "record", tokenId: BOB_WALLET, nativeKey: "token.ETH.0", nativeValue: BOB }],
  [20, { type: "record", tokenId: ALICE_WALLET, nativeKey: "record.A.0", nativeValue: "192.0.2.2" }],
  [20, { type: "transfer", tokenId: ALICE_WALLET, from: ALICE, to: BOB }],
  [25, { type: "record", tokenId: BOB_WALLET, nativeKey: "record.A.0", nativeValue: "192.0.2.9" }],
  [30, { type: "transfer", tokenId: ALICE_WALLET, from: BOB, to: ZERO_ADDRESS }],
];
const CHECKPOINT = 40;
const HEAD = 45;

function journal(): JournalEntry[] {
  const logIndex = new Map<number, number>();
  return HISTORY.map(([block, event]) => {
    const i = logIndex.get(block) ?? 0;
    logIndex.set(block, i + 1);
    return {
      sourceId: FNS.id,
      chainId: 137,
      blockNumber: block,
      blockHash: hashOf(block),
      logIndex: i,
      txHash: txOf(block, i),
      contract: CONTRACT,
      tokenId: (event as { tokenId: string }).tokenId,
      event: JSON.stringify(event),
      blockTime: timeOf(block),
    };
  });
}

async function seed(store: Store): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.crawlerLog.appendJournal(journal());
    await reproject(tx, FNS, [ALICE_WALLET, BOB_WALLET], NEUTRAL_SIGNALS);
    await tx.crawlerLog.setCheckpoint({
      sourceId: FNS.id,
      chainId: 137,
      blockNumber: CHECKPOINT,
      blockHash: hashOf(CHECKPOINT),
      updatedAt: NOW,
      state: "live",
      error: null,
    });
  });
  await store.crawlerLog.acquireSourceLease(FNS.id, "crawler-1", NOW, 3_600_000);
  await store.crawlerLog.reportSourceProgress(FNS.id, "crawler-1", {
    head: HEAD,
    syncedAt: NOW - 30_000,
    now: NOW,
  });
}

interface Rec {
  domain: string;
  ownerAddress: string;
  records: Record<string, string>;
  provenance?: {
    owner: Record<string, unknown> | null;
    records: Record<string, Record<string, unknown> | null>;
    asOf: Record<string, unknown> | null;
  };
}

describe.each<Backend>(["sqlite", "postgres"])("time travel and provenance (%s)", (backend) => {
  let t: TestApp;
  const json = async (url: string) => {
    const r = await t.get(url);
    return {
      status: r.statusCode,
      body: JSON.parse(r.body) as { data: Rec & Rec[]; error?: { code: string; message: string } },
    };
  };

  beforeAll(async () => {
    t = await createTestApp({ backend, seed });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it("answers today's state without the parameters: alice.wallet burned, bob.wallet alive", async () => {
    expect((await json("/svc/api/v1/resolve?domain=alice.wallet")).status).toBe(404);
    const bob = await json("/svc/api/v1/resolve?domain=bob.wallet");
    expect(bob.body.data.records).toEqual({ "record.A.0": "192.0.2.9", "token.ETH.0": BOB });
    expect(bob.body.data.provenance).toBeUndefined();
  });

  it.each([
    [9, null, null],
    [10, ALICE, "192.0.2.1"],
    [19, ALICE, "192.0.2.1"],
    [20, BOB, "192.0.2.2"],
    [29, BOB, "192.0.2.2"],
    [30, null, null],
    [40, null, null],
  ])("atBlock=POLYGON:%i: alice.wallet as it was (owner %s, A %s)", async (block, owner, a) => {
    if (block < 10) {
      // before the source's first indexed block
      const r = await json(`/svc/api/v1/resolve?domain=alice.wallet&atBlock=POLYGON:${block}`);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe("AT_BEFORE_INDEX");
      return;
    }
    const r = await json(`/svc/api/v1/resolve?domain=alice.wallet&atBlock=POLYGON:${block}`);
    const deep = await json(`/svc/api/v1/deep-resolve?domain=alice.wallet&atBlock=matic:${block}`);
    const byTime = await json(`/svc/api/v1/resolve?domain=alice.wallet&at=${iso(block)}`);
    if (owner === null) {
      expect(r.status).toBe(404);
      expect(deep.body.data).toEqual([]);
      expect(byTime.status).toBe(404);
      return;
    }
    expect(r.status).toBe(200);
    expect(r.body.data.ownerAddress).toBe(owner);
    expect(r.body.data.records).toEqual({ "record.A.0": a });
    expect(deep.body.data.map((d) => d.ownerAddress)).toEqual([owner]);
    expect(byTime.body.data.ownerAddress).toBe(owner);
    expect(byTime.body.data.records).toEqual({ "record.A.0": a });
  });

  it("reverse-resolve at a block lists what the address owned then", async () => {
    const names = async (addr: string, block: number) =>
      (
        await json(`/svc/api/v1/reverse-resolve?walletAddress=${addr}&atBlock=POLYGON:${block}`)
      ).body.data.map((d) => d.domain);
    expect(await names(ALICE, 15)).toEqual(["alice.wallet"]);
    expect(await names(ALICE, 20)).toEqual([]);
    expect(await names(BOB, 11)).toEqual([]);
    expect((await names(BOB, 21)).sort()).toEqual(["alice.wallet", "bob.wallet"]);
    expect(await names(BOB, 35)).toEqual(["bob.wallet"]);
  });

  it("provenance names the event that set the owner and each record, and where the index stood", async () => {
    const r = await json("/svc/api/v1/resolve?domain=bob.wallet&provenance=true");
    const p = r.body.data.provenance!;
    const origin = (block: number, i: number) => ({
      chainId: 137,
      blockNumber: block,
      blockHash: hashOf(block),
      transactionHash: txOf(block, i),
      logIndex: i,
      blockTime: iso(block),
    });
    // block 12's logs: bob's transfer (0), name (1), record (2)
    expect(p.owner).toEqual(origin(12, 0));
    expect(p.records).toEqual({ "record.A.0": origin(25, 0), "token.ETH.0": origin(12, 2) });
    expect(p.asOf).toEqual({
      block: CHECKPOINT,
      blockHash: hashOf(CHECKPOINT),
      lagBlocks: HEAD - CHECKPOINT,
      secondsBehind: 30,
    });
    // with time travel: the records as they were, from the events before the point
    const past = (await json("/svc/api/v1/resolve?domain=alice.wallet&provenance=1&atBlock=POLYGON:20")).body
      .data;
    expect(past.provenance!.owner).toEqual(origin(20, 1));
    expect(past.provenance!.records).toEqual({ "record.A.0": origin(20, 0) });
    const deep = (await json("/svc/api/v1/deep-resolve?domain=bob.wallet&provenance=yes")).body.data;
    expect(deep[0].provenance).toEqual(p);
    const rev = (await json(`/svc/api/v1/reverse-resolve?walletAddress=${BOB}&provenance=true`)).body.data;
    expect(rev.map((d) => d.provenance?.owner)).toEqual([origin(12, 0)]);
  });

  it("leaves the answer's bytes alone without provenance (absent, false or empty)", async () => {
    for (const path of [
      "resolve?domain=bob.wallet",
      "deep-resolve?domain=bob.wallet",
      `reverse-resolve?walletAddress=${BOB}`,
    ]) {
      const plain = await t.get(`/svc/api/v1/${path}`);
      for (const extra of ["&provenance=false", "&provenance=", "&provenance=0", "&at=", "&atBlock="]) {
        const other = await t.get(`/svc/api/v1/${path}${extra}`);
        expect(other.rawPayload.equals(plain.rawPayload)).toBe(true);
      }
      expect(plain.body).not.toContain("provenance");
    }
  });

  it("reads at with an offset, its + sent encoded or not", async () => {
    const local = iso(15).replace("Z", "+00:00");
    const shifted = new Date(timeOf(15) * 1000 + 2 * 3_600_000).toISOString().replace("Z", "+02:00");
    for (const at of [local, encodeURIComponent(local), shifted]) {
      const r = await json(`/svc/api/v1/resolve?domain=alice.wallet&at=${at}`);
      expect([r.status, r.body.data?.ownerAddress], at).toEqual([200, ALICE]);
    }
  });

  it("counts each refused or answered time-travel request once in the quota", async () => {
    const before = await t.services.limits.quotaUsed(t.projectId);
    const urls = [
      "resolve?domain=bob.wallet&provenance=maybe",
      "resolve?domain=bob.wallet&at=yesterday",
      "resolve?domain=bob.wallet&at=2024-05-01&atBlock=POLYGON:1",
      "deep-resolve?domain=bob.wallet&atBlock=MOON:1",
      "deep-resolve?domain=bob.wallet&atBlock=POLYGON:-1",
      `reverse-resolve?walletAddress=${BOB}&atBlock=POLYGON:99999999999999999`,
      "resolve?domain=bob.wallet&atBlock=POLYGON:41",
      "resolve?domain=bob.wallet&atBlock=POLYGON:20&provenance=true",
    ];
    for (const url of urls) await t.get(`/svc/api/v1/${url}`);
    expect((await t.services.limits.quotaUsed(t.projectId)) - before).toBe(urls.length);
  });

  it("refuses points the index cannot answer for, each with its own code", async () => {
    const cases: Array<[string, string]> = [
      ["atBlock=POLYGON:41", "AT_AFTER_INDEX"],
      [`at=${new Date(NOW + 60_000).toISOString()}`, "AT_AFTER_INDEX"],
      ["at=2000-01-01T00:00:00Z", "AT_BEFORE_INDEX"],
      ["atBlock=POLYGON:0", "AT_BEFORE_INDEX"],
      ["atBlock=ETHEREUM:100", "AT_BEFORE_INDEX"],
    ];
    for (const [q, code] of cases) {
      for (const path of [
        "resolve?domain=bob.wallet",
        "deep-resolve?domain=bob.wallet",
        `reverse-resolve?walletAddress=${BOB}`,
      ]) {
        const r = await json(`/svc/api/v1/${path}&${q}`);
        expect([r.status, r.body.error?.code], `${path}&${q}`).toEqual([400, code]);
      }
    }
  });
});

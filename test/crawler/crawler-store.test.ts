import { describe, expect, it } from "vitest";
import { applyRange, rollbackTo } from "../../src/crawler/apply-range.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { journalEntriesOf } from "../../src/crawler/journal-entries.js";
import type { FetchedLog } from "../../src/crawler/chain-reader.js";
import { namehash } from "../../src/providers/namehash.js";
import type { Hex } from "../../src/providers/provider.js";
import { UNS_TOPICS } from "../../src/providers/uns/uns-events.js";
import { unsAdapter } from "../../src/providers/uns/uns.adapter.js";
import type { Store } from "../../src/store/store.js";
import { encodeAbiParameters, keccak256, pad, toHex } from "viem";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { dumpStore, NEUTRAL_SIGNALS } from "./crawler-harness.js";

const REGISTRY = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const BOB = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const TOKEN = namehash("replay.crypto");
const source: CrawlerSource = {
  id: "uns-ethereum",
  provider: "NAMESPACE_B",
  network: "ETHEREUM",
  chainId: 1,
  adapter: unsAdapter,
  contracts: { addresses: { registry: REGISTRY }, startBlock: 1 },
  rpcUrl: "http://127.0.0.1:1",
};

const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;
let index = 0;
function log(block: number, topics: Hex[], data: Hex = "0x"): FetchedLog {
  return {
    chainId: 1,
    blockNumber: block,
    blockHash: hashOf(block),
    logIndex: index++,
    transactionHash: hashOf(1_000 + index),
    address: REGISTRY,
    topics,
    data,
    blockTime: 1_700_000_000 + block * 12,
  };
}
const transfer = (block: number, from: string, to: string) =>
  log(block, [UNS_TOPICS.Transfer, pad(from as Hex), pad(to as Hex), TOKEN]);
const set = (block: number, key: string, value: string) =>
  log(
    block,
    [UNS_TOPICS.Set, TOKEN, keccak256(toHex(key)), keccak256(toHex(value))],
    encodeAbiParameters([{ type: "string" }, { type: "string" }], [key, value]),
  );
const reverse = (block: number, addr: string) => log(block, [UNS_TOPICS.SetReverse, pad(addr as Hex), TOKEN]);

async function apply(store: Store, logs: FetchedLog[], to: number, changesSince: number | null = null) {
  const entries = journalEntriesOf(source, logs, new Map(), []);
  await applyRange(
    store,
    source,
    {
      entries,
      checkpoint: {
        sourceId: source.id,
        chainId: 1,
        blockNumber: to,
        blockHash: hashOf(to),
        updatedAt: 0,
        state: "live",
        error: null,
      },
      recentBlocks: [...new Set(logs.map((l) => l.blockNumber)), to].map((n) => ({
        blockNumber: n,
        blockHash: hashOf(n),
        parentHash: hashOf(n - 1),
      })),
      pruneBelow: 0,
      changesSince,
    },
    NEUTRAL_SIGNALS,
  );
}

const ZERO = "0x0000000000000000000000000000000000000000";
// Fixed log positions per range, so that a range built twice is the same range.
const rangeA = () => {
  index = 0;
  return [
    transfer(1, ZERO, ALICE),
    log(1, [UNS_TOPICS.NewURI, TOKEN], encodeAbiParameters([{ type: "string" }], ["replay.crypto"])),
    set(2, "crypto.ETH.address", ALICE),
    reverse(2, ALICE),
  ];
};
const rangeB = () => {
  index = 10;
  return [transfer(3, ALICE, BOB), set(3, "crypto.ETH.address", BOB), set(4, "crypto.BTC.address", "bc1q")];
};

const backends = STORE_BACKENDS.map((b) => [b.name, b.open] as const);

describe.each(backends)("journal projection and rollback (%s)", (_name, open) => {
  it("applies ranges, and a rollback replays the journal back to exactly the earlier state", async () => {
    const a = await open();
    const b = await open();
    try {
      await apply(a.store, rangeA(), 2);
      const afterA = await dumpStore(a.store);
      const [d] = await a.store.domainMap.findDomainsByName(["replay.crypto"], {});
      expect(d).toMatchObject({ owner: ALICE, registeredBlock: 1, lastUpdateBlock: 2 });
      expect(await a.store.domainMap.findReverse(ALICE, {})).toEqual([
        { network: "ETHEREUM", provider: "NAMESPACE_B", address: ALICE, domainId: d.id },
      ]);

      await apply(a.store, rangeB(), 4);
      const [moved] = await a.store.domainMap.findDomainsByName(["replay.crypto"], {});
      expect(moved.owner).toBe(BOB);
      expect(Object.fromEntries(moved.records.map((r) => [r.key, r.value]))).toEqual({
        "token.ETH.0": BOB,
        "token.BTC.0": "bc1q",
      });

      // Applying range B again (a resume after a crash) changes nothing.
      const afterB = await dumpStore(a.store);
      await apply(a.store, rangeB(), 4);
      expect(await dumpStore(a.store)).toEqual(afterB);

      const r = await rollbackTo(
        a.store,
        source,
        { blockNumber: 2, blockHash: hashOf(2) },
        "live",
        0,
        NEUTRAL_SIGNALS,
      );
      expect(r).toMatchObject({ entriesDeleted: 3, tokens: 1 });
      expect(await dumpStore(a.store)).toEqual(afterA);
      expect((await a.store.crawlerLog.findRecentBlocks(source.id, 0)).map((x) => x.blockNumber)).toEqual([
        1, 2,
      ]);
      expect(await a.store.crawlerLog.findJournalTokensAfter(source.id, 2)).toEqual([]);
      // The same as a store that never saw range B.
      await apply(b.store, rangeA(), 2);
      expect(await dumpStore(b.store)).toEqual(afterA);

      // Rolling back past the mint removes the domain and its reverse record.
      await rollbackTo(a.store, source, { blockNumber: 0, blockHash: hashOf(0) }, "live", 0, NEUTRAL_SIGNALS);
      expect(await a.store.domainMap.countDomains()).toBe(0);
      expect(await a.store.domainMap.findReverse(ALICE, {})).toEqual([]);
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
  });
});

describe.each(backends)("a range of another branch at journaled positions (%s)", (_name, open) => {
  it("is skipped in the map as in the journal until a rollback deletes the old branch", async () => {
    const a = await open();
    try {
      await apply(a.store, rangeA(), 2);
      await apply(a.store, rangeB(), 4);
      const afterB = await dumpStore(a.store);
      // Range B's positions (blocks 3 and 4, log indexes 10-12) on another branch, with other
      // events: the journal keeps one branch per source (its key is the source's position), so the
      // map must not fold the other branch's events over the journal's either.
      const otherBranch = () => {
        index = 10;
        return [
          set(3, "crypto.ETH.address", ZERO),
          transfer(3, BOB, ALICE),
          set(4, "crypto.BTC.address", "bc1z"),
        ].map((l) => ({ ...l, blockHash: hashOf(0x1000 + l.blockNumber) }));
      };
      await apply(a.store, otherBranch(), 4);
      expect(await dumpStore(a.store)).toEqual(afterB);
      expect((await a.store.crawlerLog.findJournalAfter(source.id, 2)).map((e) => e.blockHash)).toEqual([
        hashOf(3),
        hashOf(3),
        hashOf(4),
      ]);
      // Once the rollback has deleted the old branch, the other one is written and folded.
      await rollbackTo(a.store, source, { blockNumber: 2, blockHash: hashOf(2) }, "live", 0, NEUTRAL_SIGNALS);
      await apply(a.store, otherBranch(), 4);
      const [d] = await a.store.domainMap.findDomainsByName(["replay.crypto"], {});
      expect(d.owner).toBe(ALICE);
      expect(Object.fromEntries(d.records.map((r) => [r.key, r.value]))).toMatchObject({
        "token.BTC.0": "bc1z",
      });
    } finally {
      await a.cleanup();
    }
  });
});

describe.each(backends)("change log written with the map (%s)", (_name, open) => {
  it("logs nothing for blocks older than the retention window (a backfill of old history)", async () => {
    const a = await open();
    try {
      const blockTimeOf2 = (1_700_000_000 + 2 * 12) * 1000;
      await apply(a.store, rangeA(), 2, blockTimeOf2 + 1);
      expect(await a.store.domainMap.countDomains()).toBe(1);
      expect(await a.store.changeLog.findChangeEventsAfter(0, 100)).toEqual([]);
      await apply(a.store, rangeB(), 4, blockTimeOf2 + 1);
      expect((await a.store.changeLog.findChangeEventsAfter(0, 100)).map((e) => e.type)).toEqual([
        "domain.updated",
      ]);
    } finally {
      await a.cleanup();
    }
  });

  it("logs creation, owner and record changes, retracts a reorg's events and logs the corrected state", async () => {
    const a = await open();
    try {
      await apply(a.store, rangeA(), 2);
      const created = await a.store.changeLog.findChangeEventsAfter(0, 100);
      expect(created).toHaveLength(1);
      expect(created[0]).toMatchObject({
        type: "domain.created",
        name: "replay.crypto",
        tld: "crypto",
        network: "ETHEREUM",
        provider: "NAMESPACE_B",
        tokenId: TOKEN,
        blockNumber: 2,
        blockHash: hashOf(2),
        retracts: null,
        payload: { state: { owner: ALICE, records: [{ key: "token.ETH.0", value: ALICE }] } },
      });
      expect(created[0].txHash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(created[0].blockTime).toBe((1_700_000_000 + 2 * 12) * 1000);

      await apply(a.store, rangeB(), 4);
      const [updated] = await a.store.changeLog.findChangeEventsAfter(created[0].id, 100);
      expect(updated).toMatchObject({
        type: "domain.updated",
        blockNumber: 4,
        payload: {
          owner: { from: ALICE, to: BOB },
          records: {
            added: [{ key: "token.BTC.0", value: "bc1q" }],
            removed: [],
            changed: [{ key: "token.ETH.0", from: ALICE, to: BOB }],
          },
        },
      });
      // A range applied again (a resume after a crash) changes nothing: no event.
      await apply(a.store, rangeB(), 4);
      expect(await a.store.changeLog.findChangeEventsAfter(updated.id, 100)).toEqual([]);

      await rollbackTo(a.store, source, { blockNumber: 2, blockHash: hashOf(2) }, "live", 7, NEUTRAL_SIGNALS);
      const [retracted, corrected, ...rest] = await a.store.changeLog.findChangeEventsAfter(updated.id, 100);
      expect(rest).toEqual([]);
      expect(retracted).toMatchObject({ type: "change.retracted", retracts: updated.id, blockNumber: 2 });
      expect(corrected).toMatchObject({
        type: "domain.updated",
        txHash: null,
        payload: { owner: { from: BOB, to: ALICE } },
      });
      // Rolling back past the mint: the creation is retracted, the removal follows; the retracted
      // update is not retracted twice.
      await rollbackTo(a.store, source, { blockNumber: 0, blockHash: hashOf(0) }, "live", 8, NEUTRAL_SIGNALS);
      const tail = await a.store.changeLog.findChangeEventsAfter(corrected.id, 100);
      expect(tail.map((e) => [e.type, e.retracts])).toEqual([
        ["change.retracted", created[0].id],
        ["change.retracted", corrected.id],
        ["domain.removed", null],
      ]);
      expect(tail[2].payload).toMatchObject({ owner: { from: ALICE, to: null } });
      expect(tail[2].payload.prior).toMatchObject({ csamOk: true });

      const newest = tail[2].id;
      expect(await a.store.changeLog.changeLogBounds()).toEqual({ prunedThrough: 0, newest });
      // Pruning: everything written before t=8 (the events of t=0 and t=7) goes, a page at a time.
      expect(await a.store.changeLog.pruneChangeEvents(8, 2)).toBe(2);
      expect(await a.store.changeLog.pruneChangeEvents(8, 100)).toBe(2);
      expect(await a.store.changeLog.pruneChangeEvents(8, 100)).toBe(0);
      expect((await a.store.changeLog.findChangeEventsAfter(0, 100)).map((e) => e.type)).toEqual([
        "change.retracted",
        "change.retracted",
        "domain.removed",
      ]);
      expect(await a.store.changeLog.changeLogBounds()).toEqual({ prunedThrough: corrected.id, newest });
    } finally {
      await a.cleanup();
    }
  });
});

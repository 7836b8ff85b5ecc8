import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/store/crawler-log.port.js";
import type { Store } from "../../src/store/store.js";
import { ALICE, BOB, STORE_BACKENDS, tokenIdOf } from "../helpers/store-world.js";

/** The journal reads of time travel, on both backends: bounds by block and by time, keys by address. */

const hash = (n: number) => `0x${n.toString(16).padStart(64, "a")}`;

function entry(
  sourceId: string,
  token: string,
  block: number,
  logIndex: number,
  event: object,
  time: number | null,
): JournalEntry {
  return {
    sourceId,
    chainId: 137,
    blockNumber: block,
    blockHash: hash(block),
    logIndex,
    txHash: hash(block * 10 + logIndex),
    contract: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
    tokenId: token,
    event: JSON.stringify(event),
    blockTime: time,
  };
}

const T1 = tokenIdOf(1);
const T2 = tokenIdOf(2);
const ENTRIES: JournalEntry[] = [
  entry("fns-polygon", T1, 5, 0, { type: "transfer", tokenId: T1, from: "0x0", to: ALICE }, 1000),
  entry("fns-polygon", T1, 5, 1, { type: "record", tokenId: T1, nativeKey: "k", nativeValue: "v" }, 1000),
  entry("fns-polygon", T2, 7, 0, { type: "transfer", tokenId: T2, from: "0x0", to: BOB }, 1100),
  entry("fns-polygon", T1, 9, 0, { type: "transfer", tokenId: T1, from: ALICE, to: BOB }, 1200),
  entry("fns-polygon", T1, 11, 0, { type: "record", tokenId: T1, nativeKey: "k", nativeValue: "w" }, null),
  entry("uns-polygon", T1, 3, 0, { type: "transfer", tokenId: T1, from: "0x0", to: ALICE }, 900),
];

describe.each(STORE_BACKENDS)("journal history reads ($name)", ({ open }) => {
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ store, cleanup } = await open());
    await store.crawlerLog.appendJournal(ENTRIES);
  }, 60_000);
  afterAll(async () => {
    await cleanup?.();
  });

  const at = (list: JournalEntry[]) =>
    list.map((e) => `${e.tokenId === T1 ? "T1" : "T2"}@${e.blockNumber}.${e.logIndex}`);

  it("reads a source's entries of tokens up to a block, grouped by token in chain order", async () => {
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [T2, T1], { block: 9 }))).toEqual([
      "T1@5.0",
      "T1@5.1",
      "T1@9.0",
      "T2@7.0",
    ]);
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [T1], { block: 4 }))).toEqual([]);
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [T1], { block: 100 }))).toEqual([
      "T1@5.0",
      "T1@5.1",
      "T1@9.0",
      "T1@11.0",
    ]);
    expect(at(await store.crawlerLog.findJournalUpTo("uns-polygon", [T1, T2], { block: 100 }))).toEqual([
      "T1@3.0",
    ]);
  });

  it("reads up to a block time, leaving out entries whose time is unknown", async () => {
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [T1, T2], { time: 1100 }))).toEqual([
      "T1@5.0",
      "T1@5.1",
      "T2@7.0",
    ]);
    expect(at(await store.crawlerLog.findJournalUpTo("fns-polygon", [T1], { time: 99_999 }))).toEqual([
      "T1@5.0",
      "T1@5.1",
      "T1@9.0",
    ]);
    const [first] = await store.crawlerLog.findJournalUpTo("fns-polygon", [T1], { time: 1000 });
    expect(first).toMatchObject({ chainId: 137, blockHash: hash(5), txHash: hash(50), blockTime: 1000 });
  });

  it("finds the keys whose events name an address, up to a point", async () => {
    expect(
      (await store.crawlerLog.findJournalKeysMentioning("fns-polygon", BOB, { block: 8 })).sort(),
    ).toEqual([T2]);
    expect(
      (await store.crawlerLog.findJournalKeysMentioning("fns-polygon", BOB, { block: 9 })).sort(),
    ).toEqual([T1, T2].sort());
    expect(await store.crawlerLog.findJournalKeysMentioning("fns-polygon", ALICE, { time: 999 })).toEqual([]);
    expect(await store.crawlerLog.findJournalKeysMentioning("uns-polygon", BOB, { block: 100 })).toEqual([]);
  });

  it("knows a source's first entry and the time of its last entry at or before a block", async () => {
    expect(await store.crawlerLog.findJournalStart("fns-polygon")).toEqual({
      blockNumber: 5,
      blockTime: 1000,
    });
    expect(await store.crawlerLog.findJournalStart("ens-ethereum")).toBeNull();
    expect(await store.crawlerLog.findJournalTimeAt("fns-polygon", 10)).toBe(1200);
    expect(await store.crawlerLog.findJournalTimeAt("fns-polygon", 11)).toBe(1200);
    expect(await store.crawlerLog.findJournalTimeAt("fns-polygon", 4)).toBeNull();
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "@solana/kit";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NEUTRAL_SNS_SIGNALS, type SnsEndpoint, snsMapOf, startSnsEndpoint } from "../helpers/sns-world.js";
import { waitFor } from "./crawler-harness.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { SNS_PROGRAMS } from "../../src/providers/sns/sns-program.js";
import type { RawAccount } from "../../src/providers/sns/sns-state.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createSnsSync, type SnsSync } from "../../src/crawler/sns-sync.js";
import { createSolanaReader, type SolanaReader } from "../../src/crawler/solana-reader.js";

describe("the SNS source re-reads only the names a notification touches", () => {
  let sns: SnsEndpoint;
  let dir: string;
  const stores: Store[] = [];
  /** The reader's getProgramAccounts of the whole `.sol` root: one per full pass. */
  let rootReads = 0;
  let counting: SolanaReader;
  const newStore = async () => {
    const store = await createStore({ databaseUrl: undefined, dataDir: mkdtempSync(join(dir, "s-")) });
    stores.push(store);
    return store;
  };
  const syncOf = (store: Store, reader?: SolanaReader, wsUrl?: string) =>
    createSnsSync({
      source: sns.source,
      store,
      signals: NEUTRAL_SNS_SIGNALS,
      log: pino({ level: "silent" }),
      reader,
      wsUrl: wsUrl ?? null,
      pollIntervalMs: 600_000,
    });

  beforeAll(async () => {
    sns = await startSnsEndpoint({ hostile: false });
    dir = mkdtempSync(join(tmpdir(), "omniname-sns-notify-"));
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

  it("journals, pass by pass, the map a full pass builds, without reading the whole root", async () => {
    const store = await newStore();
    const sync: SnsSync = syncOf(store, counting);
    await sync.scanOnce();
    let touched: RawAccount[] = [];
    const off = sns.ledger.onChange((_slot, accounts) => {
      for (const a of accounts)
        if (a.owner === SNS_PROGRAMS.nameService)
          touched.push({ address: a.address, data: a.exists ? a.data : new Uint8Array(0) });
    });
    const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
    const steps: Array<[string, () => void]> = [
      ["transfer", () => sns.writer.transfer("dave.sol", SNS_WALLETS.eve as Address)],
      ["Records V2 set", () => sns.writer.setRecordV2("eve.sol", "twitter", utf8("eve_on_sol"))],
      ["V1 record", () => sns.writer.setRecordV1("carol.sol", "discord", utf8("carol#1"))],
      ["registration", () => sns.writer.register("fresh.sol", SNS_WALLETS.bob as Address)],
      ["subdomain", () => sns.writer.register("shop.fresh.sol", SNS_WALLETS.carol as Address)],
      [
        "subdomain record",
        () => sns.writer.setRecordV2("shop.fresh.sol", "url", utf8("https://shop.example")),
      ],
      ["transfer of a primary name", () => sns.writer.transfer("alice.sol", SNS_WALLETS.bob as Address)],
    ];
    try {
      for (const [what, step] of steps) {
        touched = [];
        step();
        const before = rootReads;
        const stats = await sync.scanNames(touched);
        expect([what, stats.partial, rootReads - before]).toEqual([what, true, 0]);
        expect(stats.changed + stats.released, what).toBeGreaterThan(0);
      }
      // A deletion closes accounts the map cannot place by their (empty) data: a full pass.
      touched = [];
      sns.writer.remove("fresh.sol");
      expect((await sync.scanNames(touched)).partial).toBe(false);
    } finally {
      off();
    }
    const fresh = await newStore();
    await syncOf(fresh).scanOnce();
    expect(await snsMapOf(store)).toEqual(await snsMapOf(fresh));
    expect(await snsMapOf(store)).toContain(JSON.stringify([SNS_WALLETS.alice, []]));
    // And a full pass over the partly maintained map finds nothing to journal.
    const again = await sync.scanOnce();
    expect([again.changed, again.released]).toEqual([0, 0]);
  });

  it("follows a programSubscribe notification live with a pass over the touched name", async () => {
    const store = await newStore();
    const sync = syncOf(store, counting, sns.rpc.wsUrl);
    const running = sync.run();
    try {
      await waitFor(async () => ((await snsMapOf(store)).length > 5 ? true : null), 10_000, "the first pass");
      const before = rootReads;
      sns.writer.transfer("eve.sol", SNS_WALLETS.carol as Address);
      await waitFor(
        async () => {
          const [eve] = await store.domainMap.findDomainsByName(["eve.sol"], { network: "SOLANA" });
          return eve?.owner === SNS_WALLETS.carol ? true : null;
        },
        10_000,
        "the transfer",
      );
      expect(rootReads - before).toBe(0);
      // A primary domain (name offers program) is notified too: a full pass follows at once.
      expect((await store.domainMap.findReverse(SNS_WALLETS.carol, {})).map((r) => r.domainId)).not.toContain(
        (await store.domainMap.findDomainsByName(["eve.sol"], { network: "SOLANA" }))[0]?.id,
      );
      sns.writer.setPrimary(SNS_WALLETS.carol as Address, "eve.sol");
      await waitFor(
        async () => {
          const [eve] = await store.domainMap.findDomainsByName(["eve.sol"], { network: "SOLANA" });
          const [first] = await store.domainMap.findReverse(SNS_WALLETS.carol, { network: "SOLANA" });
          return first?.domainId === eve?.id ? true : null;
        },
        10_000,
        "carol's new primary name",
      );
      expect(rootReads - before).toBe(1);
    } finally {
      sync.stop();
      await running;
    }
  });
});

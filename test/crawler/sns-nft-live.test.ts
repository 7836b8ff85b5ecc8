// NFT transfers of tokenized .sol names followed live: the SNS source watches, with
// `accountSubscribe` over the devnet endpoint's real WebSocket, the token account holding each
// tokenized name's NFT, and a transfer of the NFT re-reads that name alone, long before the poll
// (10 minutes here). Bonfida's SDK (its tokenized-owner rule) judges the owner the API then serves.
// On SQLite and PostgreSQL.
import type { Address } from "@solana/kit";
import { Connection } from "@solana/web3.js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSnsSync, type SnsSync } from "../../src/crawler/sns-sync.js";
import { createSolanaReader, type SolanaReader } from "../../src/crawler/solana-reader.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { ataOf } from "../../src/devnet/sns-writer.js";
import { domainKeyOf, SNS_PROGRAMS, tokenizedMintOf } from "../../src/providers/sns/sns-program.js";
import { createTestApp, type TestApp } from "../api/helpers/test-app.js";
import { NEUTRAL_SNS_SIGNALS, type SnsEndpoint, startSnsEndpoint } from "../helpers/sns-world.js";
import { sns as sdk } from "../judge/sns-sdk.js";
import { waitFor } from "./crawler-harness.js";

describe.each(["sqlite", "postgres"] as const)(
  "an SNS name's NFT transfer, followed live on %s",
  (backend) => {
    let sns: SnsEndpoint;
    let t: TestApp;
    let conn: Connection;
    let sync: SnsSync;
    let running: Promise<void>;
    /** getProgramAccounts of the whole `.sol` root: one per full pass (the poll's kind of pass). */
    let rootReads = 0;
    const mint = tokenizedMintOf(domainKeyOf("bob.sol") as Address);
    const w = SNS_WALLETS as Record<string, Address>;

    beforeAll(async () => {
      sns = await startSnsEndpoint({ hostile: false });
      conn = new Connection(sns.rpc.url, "finalized");
      const real = createSolanaReader(sns.rpc.url);
      const reader: SolanaReader = {
        ...real,
        programAccounts(program, filters) {
          if (filters.some((f) => "memcmp" in f && f.memcmp.bytes === SNS_PROGRAMS.solRoot)) rootReads++;
          return real.programAccounts(program, filters);
        },
      };
      t = await createTestApp({ backend, seed: async () => {}, now: Date.now() });
      sync = createSnsSync({
        source: sns.source,
        store: t.store,
        signals: NEUTRAL_SNS_SIGNALS,
        log: pino({ level: "silent" }),
        reader,
        wsUrl: sns.rpc.wsUrl,
        pollIntervalMs: 600_000,
      });
      running = sync.run();
    }, 60_000);
    afterAll(async () => {
      sync?.stop();
      await running;
      await t?.close();
      await sns?.close();
    });

    const served = async (name: string) => {
      const r = await t.get(`/svc/api/v1/resolve?domain=${name}&network=SOLANA&provider=NAMESPACE_D`);
      return r.statusCode === 200 ? (r.json().data.ownerAddress as string) : null;
    };
    const sdkOwner = async (name: string) => {
      const { registry, nftOwner } = await sdk.NameRegistryState.retrieve(
        conn,
        sdk.getDomainKeySync(name).pubkey,
      );
      return (nftOwner ?? registry.owner).toBase58();
    };
    const watching = (holder: Address) =>
      waitFor(
        async () => (sync.watchedNfts().includes(ataOf(holder, mint)) ? true : null),
        10_000,
        `the NFT held by ${holder} watched`,
      );
    const servedAs = (name: string, owner: Address, what: string) =>
      waitFor(async () => ((await served(name)) === owner ? true : null), 10_000, what);

    it("serves the new holder after a transfer of the NFT, with no full pass, as the SDK reads it", async () => {
      await servedAs("bob.sol", w.carol, "the first pass (carol holds bob.sol's NFT)");
      await watching(w.carol);
      const passes = rootReads;
      expect(passes).toBe(1);

      sns.writer.transferNft("bob.sol", w.carol, w.dave);
      await servedAs("bob.sol", w.dave, "the NFT transfer to dave");
      expect(await sdkOwner("bob.sol")).toBe(w.dave);
      expect(rootReads).toBe(passes);
      // The watch moved to dave's token account: the next transfer is followed too.
      await watching(w.dave);
      expect(sync.watchedNfts()).not.toContain(ataOf(w.carol, mint));
      sns.writer.transferNft("bob.sol", w.dave, w.eve);
      await servedAs("bob.sol", w.eve, "the NFT transfer to eve");
      expect(await sdkOwner("bob.sol")).toBe(w.eve);
      expect(rootReads).toBe(passes);
    });

    it("watches a name tokenized live, and unwatches it when it is no longer tokenized", async () => {
      const passes = rootReads;
      const daveMint = tokenizedMintOf(domainKeyOf("dave.sol") as Address);
      sns.writer.tokenize("dave.sol", w.alice);
      await servedAs("dave.sol", w.alice, "dave.sol tokenized, its NFT held by alice");
      await waitFor(
        async () => (sync.watchedNfts().includes(ataOf(w.alice, daveMint)) ? true : null),
        10_000,
        "the new NFT watched",
      );
      sns.writer.transferNft("dave.sol", w.alice, w.bob);
      await servedAs("dave.sol", w.bob, "dave.sol's NFT moved to bob");
      expect(await sdkOwner("dave.sol")).toBe(w.bob);
      // Redeemed (the NFT burnt, the registry owner bob again): served to bob, no longer watched.
      sns.writer.transfer("alice.sol", w.carol); // an unrelated change between
      sns.writer.untokenize("dave.sol", w.bob);
      await waitFor(
        async () => (sync.watchedNfts().includes(ataOf(w.bob, daveMint)) ? null : true),
        10_000,
        "the redeemed NFT unwatched",
      );
      expect(sync.watchedNfts()).toEqual([ataOf(w.eve, mint)]);
      expect(await sdkOwner("dave.sol")).toBe(w.bob);
      await servedAs("dave.sol", w.bob, "dave.sol redeemed by bob");
      expect(rootReads).toBe(passes);
    });

    it("past its limit of watched NFTs, says so once and leaves the rest to the poll", async () => {
      const warnings: string[] = [];
      const log = pino({ level: "warn" }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
      const other = await createTestApp({ backend, seed: async () => {}, now: Date.now() });
      const limited = createSnsSync({
        source: sns.source,
        store: other.store,
        signals: NEUTRAL_SNS_SIGNALS,
        log,
        wsUrl: sns.rpc.wsUrl,
        pollIntervalMs: 600_000,
        maxWatchedNfts: 1,
      });
      const live = limited.run();
      const limitMessages = () => warnings.filter((m) => /more tokenized SNS names/.test(m));
      try {
        // eve holds bob.sol's NFT; a second tokenized name goes past the limit of 1.
        await waitFor(async () => (limited.watchedNfts().length === 1 ? true : null), 10_000, "one watch");
        expect(limitMessages()).toEqual([]);
        sns.writer.register("second.sol", w.alice);
        sns.writer.tokenize("second.sol", w.alice);
        await waitFor(async () => (limitMessages().length > 0 ? true : null), 10_000, "the limit reported");
        expect(limited.watchedNfts()).toHaveLength(1);
        // The name past the limit is followed by the poll's full pass.
        sns.writer.transferNft("second.sol", w.alice, w.carol);
        await limited.scanOnce();
        const [second] = await other.store.domainMap.findDomainsByName(["second.sol"], { network: "SOLANA" });
        expect(second?.owner).toBe(w.carol);
        expect(await sdkOwner("second.sol")).toBe(w.carol);
        expect(limitMessages()).toHaveLength(1);
      } finally {
        limited.stop();
        await live;
        await other.close();
      }
    });
  },
);

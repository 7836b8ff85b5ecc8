// The SNS change feed at `confirmed`, with retractions (docs/sns.md, "Change feed at confirmed"):
// the devnet's Solana finalizes 3 slots behind confirmed; a transfer is on the change log as soon
// as it is confirmed while the map still answers the finalized owner; when finalization catches up
// the map follows and no second event is logged; a confirmed transfer whose slot is dropped (a
// fork) is retracted and the map never shows it. On SQLite and PostgreSQL.
import type { Address } from "@solana/kit";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSnsSync, type SnsSync } from "../../src/crawler/sns-sync.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { ataOf } from "../../src/devnet/sns-writer.js";
import { domainKeyOf, tokenizedMintOf } from "../../src/providers/sns/sns-program.js";
import type { ChangeEvent } from "../../src/domain/change-events.js";
import type { Store } from "../../src/store/store.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { WinnerDeriver } from "../../src/workers/winner-deriver.js";
import { NEUTRAL_SNS_SIGNALS, type SnsEndpoint, startSnsEndpoint } from "../helpers/sns-world.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";
import { waitFor } from "./crawler-harness.js";

describe.each(STORE_BACKENDS)("SNS changes announced at confirmed, on $name", ({ open }) => {
  let sns: SnsEndpoint;
  let store: Store;
  let cleanup: () => Promise<void>;
  let sync: SnsSync;
  let running: Promise<void>;
  const w = SNS_WALLETS as Record<string, Address>;
  // The API's deriver (its passes run by hand below), and the same ranking for the settlements.
  let deriver: WinnerDeriver;

  const newSync = () =>
    createSnsSync({
      winnersOf: (tx, announced) => deriver.derive(announced, tx),
      source: sns.source,
      store,
      signals: NEUTRAL_SNS_SIGNALS,
      log: pino({ level: "silent" }),
      wsUrl: sns.rpc.wsUrl,
      // The poll (a full pass at finalized) is what notices a dropped slot: nothing notifies it.
      pollIntervalMs: 300,
    });

  beforeAll(async () => {
    sns = await startSnsEndpoint({ hostile: false, finalityLag: 3 });
    sns.ledger.advance(3); // the seeded world final
    ({ store, cleanup } = await open());
    deriver = new WinnerDeriver({
      store,
      ranker: createScoringRanker(),
      logger: pino({ level: "silent" }),
      clock: Date.now,
    });
    await deriver.tick(); // its cursor at the log's head
    sync = newSync();
    running = sync.run();
  }, 60_000);
  afterAll(async () => {
    sync?.stop();
    await running;
    await cleanup?.();
    await sns?.close();
  });

  const events = async (): Promise<ChangeEvent[]> =>
    (await store.changeLog.findChangeEventsAfter(0, 10_000)).filter((e) => e.name === "dave.sol");
  const bobOwner = async () =>
    (await store.domainMap.findDomainsByName(["bob.sol"], { network: "SOLANA" }))[0]?.owner ?? null;
  const ownerInMap = async () =>
    (await store.domainMap.findDomainsByName(["dave.sol"], { network: "SOLANA" }))[0]?.owner ?? null;
  /** Waits for events of dave.sol past the first `before`. */
  const eventsSince = (before: number, what: string) =>
    waitFor(
      async () => {
        const list = (await events()).slice(before);
        return list.length > 0 ? list : null;
      },
      10_000,
      what,
    );
  /** Waits for a pass at `finalized` at or past `slot`. */
  const passAt = (slot: number, what: string) =>
    waitFor(async () => ((sync.status().checkpoint ?? 0) >= slot ? true : null), 10_000, what);

  it("logs a confirmed transfer at once, the map follows at finalized, with no second event", async () => {
    await waitFor(async () => ((await ownerInMap()) === w.dave ? true : null), 10_000, "the first pass");
    const before = (await events()).length;
    const slot = sns.writer.transfer("dave.sol", w.eve);
    const [announced] = await eventsSince(before, "the confirmed transfer on the change log");
    expect(announced).toMatchObject({
      type: "domain.updated",
      blockNumber: slot,
      blockHash: `slot:${slot}`,
      payload: { owner: { from: w.dave, to: w.eve } },
    });
    // Not final yet: the map answers the finalized owner, even after passes at finalized.
    await passAt((sync.status().checkpoint ?? 0) + 1, "a finalized pass after the announcement");
    expect(await ownerInMap()).toBe(w.dave);

    sns.ledger.advance(3);
    await waitFor(async () => ((await ownerInMap()) === w.eve ? true : null), 10_000, "finalized");
    await passAt(slot, "a pass at the transfer's slot, now final");
    expect((await events()).slice(before).map((e) => [e.id, e.type])).toEqual([
      [announced.id, "domain.updated"],
    ]);
  });

  it("retracts a confirmed transfer whose slot is dropped, and the map never shows it", async () => {
    const before = (await events()).length;
    const slot = sns.writer.transfer("dave.sol", w.carol);
    const [announced] = await eventsSince(before, "the confirmed transfer on the change log");
    expect(announced).toMatchObject({ type: "domain.updated", blockNumber: slot });
    expect(sns.ledger.dropUnfinalized()).toEqual([slot]);
    const finalSlot = sns.ledger.advance(5);
    const retracted = await waitFor(
      async () => (await events()).slice(before).find((e) => e.type === "change.retracted") ?? null,
      10_000,
      "the retraction",
    );
    expect(retracted).toMatchObject({
      retracts: announced.id,
      payload: { retracted: { type: "domain.updated" } },
    });
    expect(retracted.blockNumber).toBeGreaterThan(slot);
    await passAt(finalSlot - 3, "a pass past the dropped slot");
    expect(await ownerInMap()).toBe(w.eve);
    expect((await events()).slice(before).map((e) => [e.type, e.retracts])).toEqual([
      ["domain.updated", null],
      ["change.retracted", announced.id],
    ]);
  });

  it("after a restart, retracts what the previous process announced and logs the map's own event", async () => {
    const before = (await events()).length;
    const slot = sns.writer.transfer("dave.sol", w.alice);
    const [announced] = await eventsSince(before, "the confirmed transfer on the change log");
    expect(announced).toMatchObject({ type: "domain.updated", blockNumber: slot });
    sync.stop();
    await running;
    sync = newSync();
    running = sync.run();
    sns.ledger.advance(3);
    await waitFor(async () => ((await ownerInMap()) === w.alice ? true : null), 10_000, "finalized");
    await passAt(slot, "a pass at the transfer's slot");
    const after = (await events()).slice(before);
    expect(after.map((e) => [e.type, e.retracts, e.payload.owner?.to ?? null])).toEqual([
      ["domain.updated", null, w.alice],
      ["change.retracted", announced.id, null],
      ["domain.updated", null, w.alice],
    ]);
  });

  it("announces a transfer of a tokenized name's NFT at confirmed, from the NFT's own subscription", async () => {
    // bob.sol is tokenized; carol holds its NFT. Nothing of the name service moves: only the token
    // accounts, which the source follows at confirmed too (the poll reads at finalized only).
    await waitFor(async () => ((await bobOwner()) === w.carol ? true : null), 10_000, "bob.sol's holder");
    const mint = tokenizedMintOf(domainKeyOf("bob.sol") as Address);
    await waitFor(
      async () => (sync.watchedNfts().includes(ataOf(w.carol, mint)) ? true : null),
      10_000,
      "carol's NFT account watched at both commitments",
    );
    const bob = async () =>
      (await store.changeLog.findChangeEventsAfter(0, 10_000)).filter((e) => e.name === "bob.sol");
    const before = (await bob()).length;
    const slot = sns.writer.transferNft("bob.sol", w.carol, w.dave);
    const announced = await waitFor(
      async () => (await bob()).slice(before).find((e) => e.type === "domain.updated") ?? null,
      10_000,
      "the NFT transfer announced",
    );
    expect(announced).toMatchObject({ blockNumber: slot, payload: { owner: { from: w.carol, to: w.dave } } });
    expect(await bobOwner()).toBe(w.carol); // the map: still finalized
    sns.ledger.advance(3);
    await waitFor(async () => ((await bobOwner()) === w.dave ? true : null), 10_000, "final");
    await passAt(slot, "a pass at the transfer's slot");
    expect((await bob()).slice(before).map((e) => [e.id, e.type])).toEqual([
      [announced.id, "domain.updated"],
    ]);
  });

  it("derives winner.changed for an announced change when the map reaches it, never from the announcement", async () => {
    // zed.sol on FNS (POLYGON) first; a project whose rule makes SNS win every .sol name.
    await store.domainMap.upsertDomain(
      testDomain({ name: "zed.sol", sld: "zed", tld: "sol", tokenId: tokenIdOf(0x2ed) }),
    );
    const project = await store.projects.createProject({ name: "sns-wins", plan: "internal" });
    await store.projects.updateProjectSettings(project.id, {
      exceptions: [{ tld: "sol", provider: "NAMESPACE_D" }],
    });
    await deriver.tick();
    const zed = async () =>
      (await store.changeLog.findChangeEventsAfter(0, 10_000)).filter((e) => e.name === "zed.sol");
    const winners = async () => (await zed()).filter((e) => e.type === "winner.changed");

    const slot = sns.writer.register("zed.sol", w.eve);
    const announced = await waitFor(
      async () => (await zed()).find((e) => e.type === "domain.created") ?? null,
      10_000,
      "zed.sol announced at confirmed",
    );
    expect(announced).toMatchObject({ blockNumber: slot, network: "SOLANA" });
    // The deriver ranks the map, which does not hold the SNS zed.sol yet: nothing from it.
    await deriver.tick();
    expect(await winners()).toEqual([]);

    sns.ledger.advance(3);
    await passAt(slot, "a pass at zed.sol's slot, now final");
    const [moved] = await waitFor(
      async () => ((await winners()).length > 0 ? winners() : null),
      10_000,
      "the settlement's winner.changed",
    );
    expect(moved).toMatchObject({
      projectId: project.id,
      blockNumber: slot,
      payload: {
        cause: "map",
        winner: {
          from: { network: "POLYGON", provider: "NAMESPACE_A", tokenId: tokenIdOf(0x2ed) },
          to: { network: "SOLANA", provider: "NAMESPACE_D" },
        },
      },
    });
    // The deriver's later passes add none: one winner.changed a scope, the announcement's alone.
    await deriver.tick();
    const all = await winners();
    expect(all.filter((e) => e.projectId === project.id)).toHaveLength(1);
    expect(new Set(all.map((e) => e.projectId)).size).toBe(all.length);
    expect((await zed()).filter((e) => e.type === "domain.created").map((e) => e.id)).toEqual([announced.id]);
  });
});

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
import type { ChangeEvent } from "../../src/domain/change-events.js";
import type { Store } from "../../src/store/store.js";
import { NEUTRAL_SNS_SIGNALS, type SnsEndpoint, startSnsEndpoint } from "../helpers/sns-world.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { waitFor } from "./crawler-harness.js";

describe.each(STORE_BACKENDS)("SNS changes announced at confirmed, on $name", ({ open }) => {
  let sns: SnsEndpoint;
  let store: Store;
  let cleanup: () => Promise<void>;
  let sync: SnsSync;
  let running: Promise<void>;
  const w = SNS_WALLETS as Record<string, Address>;

  const newSync = () =>
    createSnsSync({
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
});

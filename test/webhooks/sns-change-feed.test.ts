import type { Address } from "@solana/kit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SnsSync } from "../../src/crawler/sns-sync.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import type { Store } from "../../src/store/store.js";
import type { ApiWorkers } from "../../src/workers/api-workers.js";
import { tempStore, waitFor } from "../crawler/crawler-harness.js";
import { startFeedApp } from "../helpers/feed-app.js";
import { openFeed, type Received } from "../helpers/sse-client.js";
import { type SnsEndpoint, startSnsEndpoint } from "../helpers/sns-world.js";
import { type startReceiver, until as untilTrue } from "./receiver.js";

/**
 * SNS changes on the change feed (SSE, through the `eventsource` client) and at a webhook receiver
 * that verifies every signature with `standardwebhooks`: the SNS source runs live against the
 * devnet's Solana endpoint (woken by `programSubscribe`), and a transfer and a record set written
 * to the endpoint arrive as domain.updated events of NAMESPACE_D on SOLANA.
 */
describe("SNS changes on the change feed and at webhooks", () => {
  let sns: SnsEndpoint;
  let store: Store;
  let cleanup: () => Promise<void>;
  let sync: SnsSync;
  let running: Promise<void>;
  let app: FastifyInstance;
  let workers: ApiWorkers;
  let base: string;
  let key: string;
  let noSolanaKey: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const feeds: Array<{ close(): void }> = [];
  const hooked = () => receiver.received.filter((r) => r.path === "/sns");
  const feed = (query: string, k = key) => {
    const f = openFeed(`${base}/svc/api/v1/changes${query}`, { "api-key": k });
    feeds.push(f);
    return f;
  };
  const until = (events: Received[], n: number, what: string) =>
    waitFor(async () => (events.length >= n ? events : null), 10_000, what);

  beforeAll(async () => {
    // Finalized 3 slots behind confirmed: the feed hears changes at confirmed, before the map.
    sns = await startSnsEndpoint({ hostile: false, finalityLag: 3 });
    sns.ledger.advance(3);
    const t = await tempStore();
    store = t.store;
    cleanup = t.cleanup;
    sync = sns.syncFor(store, { wsUrl: sns.rpc.wsUrl });
    await sync.scanOnce();
    ({
      app,
      workers,
      base,
      key,
      otherKey: noSolanaKey,
      receiver,
    } = await startFeedApp(store, {
      name: "sns-feed",
      hookPath: "/sns",
      disabled: "SOLANA",
    }));
    running = sync.run();
  }, 60_000);
  afterAll(async () => {
    for (const f of feeds) f.close();
    sync?.stop();
    await running;
    await workers?.stop();
    await app?.close();
    await receiver?.close();
    await sns?.close();
    await cleanup?.();
  });

  it("streams a transfer and a record set of .sol names, and signs them to the webhook", async () => {
    const all = feed("?types=domain.updated");
    const oneName = feed("?domains=eve.sol");
    // eve's base58 address as given: the new owner of dave.sol and the owner of eve.sol.
    const eves = feed(`?networks=SOL&providers=SNS&addresses=${SNS_WALLETS.eve}`);
    const blind = feed("", noSolanaKey);
    await Promise.all([all.opened, oneName.opened, eves.opened, blind.opened]);

    const transferSlot = sns.writer.transfer("dave.sol", SNS_WALLETS.eve as Address);
    const [moved] = await until(all.events, 1, "the transfer");
    expect(moved.data).toMatchObject({
      type: "domain.updated",
      domain: "dave.sol",
      tld: "sol",
      network: "SOLANA",
      provider: "NAMESPACE_D",
      owner: { from: SNS_WALLETS.dave, to: SNS_WALLETS.eve },
    });
    expect(moved.data.block.number).toBeGreaterThanOrEqual(transferSlot);
    expect(moved.data.block.hash).toBe(`slot:${moved.data.block.number}`);

    sns.writer.setRecordV2("eve.sol", "twitter", new Uint8Array(Buffer.from("eve_on_sol")));
    const [, recordSet] = await until(all.events, 2, "the record set");
    expect(recordSet.data).toMatchObject({
      domain: "eve.sol",
      records: { added: [{ key: "social.TWITTER.0", value: "eve_on_sol" }], removed: [], changed: [] },
    });
    await until(oneName.events, 1, "the one-name stream");
    expect(oneName.events.map((e) => e.data.domain)).toEqual(["eve.sol"]);
    await until(eves.events, 2, "the address stream");
    expect(eves.events.map((e) => e.data.domain)).toEqual(["dave.sol", "eve.sol"]);

    const atHook = await untilTrue("both at the webhook", () => hooked().length >= 2 && hooked(), 10_000);
    expect(atHook.map((r) => [r.json.type, r.json.data.id, r.json.data.domain, r.verified])).toEqual([
      ["domain.updated", moved.data.id, "dave.sol", true],
      ["domain.updated", recordSet.data.id, "eve.sol", true],
    ]);
    // A project with SOLANA disabled hears none of it.
    expect(blind.events).toEqual([]);
  });

  it("retracts, on the stream and at the webhook, a confirmed change whose slot is dropped", async () => {
    // The first test's changes final (a drop would retract them too), settled with no second event.
    const finalSlot = sns.ledger.advance(3);
    await waitFor(
      async () => ((sync.status().checkpoint ?? 0) >= finalSlot - 3 ? true : null),
      10_000,
      "final",
    );
    const carol = feed("?types=domain.updated,change.retracted&domains=carol.sol");
    await carol.opened;
    const slot = sns.writer.transfer("carol.sol", SNS_WALLETS.alice as Address);
    const [announced] = await until(carol.events, 1, "the confirmed transfer");
    expect(announced.data).toMatchObject({
      type: "domain.updated",
      domain: "carol.sol",
      block: { number: slot, hash: `slot:${slot}` },
      owner: { from: SNS_WALLETS.carol, to: SNS_WALLETS.alice },
    });
    // The map is at finalized: the transfer is not there.
    const [inMap] = await store.domainMap.findDomainsByName(["carol.sol"], { network: "SOLANA" });
    expect(inMap?.owner).toBe(SNS_WALLETS.carol);
    expect(sns.ledger.dropUnfinalized()).toEqual([slot]);
    sns.ledger.advance(5);
    const [, retracted] = await until(carol.events, 2, "the retraction");
    expect(retracted.data).toMatchObject({
      type: "change.retracted",
      domain: "carol.sol",
      retracts: announced.data.id,
      retracted: { type: "domain.updated" },
    });
    const atHook = await untilTrue(
      "the retraction at the webhook",
      () => hooked().find((r) => r.json.type === "change.retracted"),
      10_000,
    );
    expect([atHook.json.data.retracts, atHook.verified]).toEqual([announced.data.id, true]);
    // The deriver's mark of an announcement stays in the log: neither the stream nor a hook shows it.
    expect(JSON.stringify([announced.data, retracted.data, ...hooked().map((r) => r.json)])).not.toContain(
      "announced",
    );
    // Every event the webhook got: the first test's two, settled without a duplicate, this one and its retraction.
    expect(hooked().map((r) => r.json.type)).toEqual([
      "domain.updated",
      "domain.updated",
      "domain.updated",
      "change.retracted",
    ]);
  });
});

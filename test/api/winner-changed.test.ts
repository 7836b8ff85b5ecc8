import { rmSync } from "node:fs";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createProjectRulesCommand } from "../../src/cli/scoring.command.js";
import type { Crawler } from "../../src/crawler/crawler.js";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { callData } from "../../src/devnet/deploy.js";
import { DEVNET_DEPLOYER, type Devnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { fnsAdapter } from "../../src/providers/fns/fns.adapter.js";
import { createProject, signedIn } from "../console/helpers/accounts.js";
import { type Agent, type ConsoleTestApp, createConsoleTestApp } from "../console/helpers/console-app.js";
import {
  rpcCall,
  senderFor,
  startCrawler,
  startPausedDevnet,
  unsMint,
  waitFor,
} from "../crawler/crawler-harness.js";
import { openFeed, type Received } from "../helpers/sse-client.js";
import { startReceiver } from "../webhooks/receiver.js";

const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const DEPLOYER = DEVNET_DEPLOYER.toLowerCase();
const NAME = "clash.x";
/** FNS (NAMESPACE_A) always wins a .x name for the project with this exception. */
const FNS_WINS = { exceptions: [{ tld: "x", provider: "NAMESPACE_A" }] };

/**
 * winner.changed on the devnet: a collision (clash.x minted on UNS and on FNS, both on POLYGON)
 * whose winner moves by a mint, a burn and a settings change in the console API, through a real
 * SSE client and a real webhook receiver on 127.0.0.1 that verifies signatures (standardwebhooks).
 */
describe.each(["sqlite", "postgres"] as const)("winner.changed on the devnet (%s)", (backend) => {
  let t: ConsoleTestApp;
  let devnet: Devnet;
  let crawler: Crawler;
  let sources: CrawlerSource[];
  let base: string;
  let owner: Agent;
  let polygon: string;
  let custom: { id: number; key: string };
  let plain: { id: number; key: string };
  const feeds: Array<{ close(): void }> = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  const fns = () => sources.find((s) => s.id === "fns-polygon")!.contracts.addresses.registry as Hex;
  const manager = () => sources.find((s) => s.id === "uns-polygon")!.contracts.addresses.mintingManager!;
  const mine = async (txs: Array<{ to: Hex; data: Hex }>) => {
    const sender = await senderFor(polygon);
    if (txs.length > 0) await sender.send(txs);
    return sender.mine();
  };
  const winners = (events: Received[]) => events.filter((e) => e.type === "winner.changed");
  const until = (what: string, f: () => boolean, ms = 8_000) =>
    waitFor(async () => (f() ? true : null), ms, what);
  /** The stream's winner.changed of settings changes (a map change may still be on its way). */
  const bySettings = (events: Received[]) => winners(events).filter((e) => e.data.cause === "settings");
  const hooked = (path: string) => receiver.received.filter((r) => r.path === path);

  beforeAll(async () => {
    t = await createConsoleTestApp({ backend, webhooks: { pollMs: 50 } });
    devnet = await startPausedDevnet(t.dataDir, ["POLYGON"]);
    polygon = devnet.manifest.networks.POLYGON!.rpcUrl;
    sources = sourcesFromManifest(devnet.manifest).filter((s) => s.network === "POLYGON");
    ({ crawler } = startCrawler(t.store, sources, { finality: 10, sync: { pollIntervalMs: 50 } }));
    const o = await signedIn(t, "winner-owner");
    owner = o.agent;
    const a = await createProject(t, [{ id: o.id, role: "owner" }]);
    const b = await createProject(t, [{ id: o.id, role: "owner" }]);
    custom = { id: a.id, key: (await createApiKey(t.store, t.ctx.pepper, a.id, "k")).key };
    plain = { id: b.id, key: (await createApiKey(t.store, t.ctx.pepper, b.id, "k")).key };
    const put = await owner.put(`projects/${custom.id}/settings`, FNS_WINS);
    expect(put.statusCode, put.body).toBe(200);
    receiver = await startReceiver(() => ({ status: 200 }));
    for (const [path, id] of [
      ["/custom", custom.id],
      ["/plain", plain.id],
    ] as const) {
      const res = await owner.post(`projects/${id}/webhooks`, {
        url: receiver.url(path),
        eventTypes: ["winner.changed"],
      });
      expect(res.statusCode, res.body).toBe(201);
      receiver.secrets.set(path, res.json().data.secret);
    }
    base = await t.app.listen({ host: "127.0.0.1", port: 0 });
    await waitFor(async () => crawler.status().every((s) => s.state === "live"), 15_000, "live sources");
  }, 60_000);
  afterAll(async () => {
    for (const f of feeds) f.close();
    await crawler?.stop();
    await devnet?.stop();
    await receiver?.close();
    const dir = t?.dataDir;
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const feed = (key: string, query = "?types=winner.changed") => {
    const f = openFeed(`${base}/svc/api/v1/changes${query}`, { "api-key": key });
    feeds.push(f);
    return f;
  };
  const resolvedProvider = async (key: string, name = NAME) => {
    const res = await t.app.inject({
      url: `/svc/api/v1/resolve?domain=${name}`,
      headers: { "api-key": key },
    });
    return res.statusCode === 200 ? (res.json().data.provider as string) : null;
  };

  it("a mint and a burn on a colliding name move its winner, per project, on the stream and at the receiver", async () => {
    const mine1 = feed(custom.key);
    const other = feed(plain.key);
    const everything = feed(custom.key, "");
    await Promise.all([mine1.opened, other.opened, everything.opened]);

    // One holder: no collision, no winner.changed (domain.created only).
    await mine([unsMint(manager(), ALICE, NAME, { "crypto.ETH.address": ALICE })]);
    await until("the UNS mint on the stream", () => everything.events.length >= 1);
    expect(everything.events.map((e) => e.type)).toEqual(["domain.created"]);
    const unsDefault = await resolvedProvider(plain.key);
    expect(unsDefault).toBe("NAMESPACE_B");

    // The FNS mint makes it a collision: for the project whose exception picks FNS, the winner moves.
    const minted = await mine([
      { to: fns(), data: callData("FNSRegistry", "mintWithRecords", [DEPLOYER, "clash", "x", [], []]) },
    ]);
    await until("winner.changed for the custom project", () => winners(mine1.events).length >= 1);
    const [moved] = winners(mine1.events);
    const fnsToken = fnsAdapter.tokenIdOf(NAME);
    expect(moved!.data).toMatchObject({
      type: "winner.changed",
      domain: NAME,
      tld: "x",
      cause: "map",
      block: { number: minted.blockNumber },
      winner: {
        from: { provider: "NAMESPACE_B", network: "POLYGON" },
        to: { provider: "NAMESPACE_A", network: "POLYGON", tokenId: fnsToken },
      },
    });
    expect(moved!.data.transactionHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(moved!.data).not.toHaveProperty("prior");
    expect(await resolvedProvider(custom.key)).toBe("NAMESPACE_A");
    // The plain project hears a winner.changed exactly when its own answer moved.
    const plainAfterMint = await resolvedProvider(plain.key);
    await until("the custom receiver", () => hooked("/custom").length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(winners(other.events).length).toBe(plainAfterMint === "NAMESPACE_B" ? 0 : 1);

    // The burn of the FNS domain: back to UNS for the custom project (and for the plain one if it had moved).
    const burned = await mine([{ to: fns(), data: callData("FNSRegistry", "burn", [BigInt(fnsToken)]) }]);
    await until("the burn's winner.changed", () => winners(mine1.events).length >= 2);
    expect(winners(mine1.events)[1]!.data).toMatchObject({
      cause: "map",
      block: { number: burned.blockNumber },
      winner: { from: { provider: "NAMESPACE_A", tokenId: fnsToken }, to: { provider: "NAMESPACE_B" } },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(winners(other.events).length).toBe(plainAfterMint === "NAMESPACE_B" ? 0 : 2);
    // Each stream got its project's events only: never another project's.
    expect(winners(mine1.events).length).toBe(2);

    // The receivers: the same events, signed, in order, each project its own.
    await until("both at the custom receiver", () => hooked("/custom").length >= 2);
    expect(hooked("/custom").map((r) => [r.json.type, r.json.data.id, r.verified])).toEqual(
      winners(mine1.events).map((e) => ["winner.changed", e.data.id, true]),
    );
    expect(hooked("/plain").map((r) => r.json.data.id)).toEqual(winners(other.events).map((e) => e.data.id));
  }, 60_000);

  it("a settings change in the console API moves the winner of the names it affects, for that project only", async () => {
    // clash.x collides again (FNS minted anew); the custom project's exception picks FNS.
    await mine([
      { to: fns(), data: callData("FNSRegistry", "mintWithRecords", [DEPLOYER, "clash", "x", [], []]) },
    ]);
    await waitFor(
      async () => ((await resolvedProvider(custom.key)) === "NAMESPACE_A" ? true : null),
      8_000,
      "FNS",
    );
    const mineNow = feed(custom.key);
    const other = feed(plain.key);
    await Promise.all([mineNow.opened, other.opened]);
    const before = hooked("/custom").length;

    // Dropping the exception: the winner goes back to what the defaults pick.
    const put = await owner.put(`projects/${custom.id}/settings`, {});
    expect(put.statusCode, put.body).toBe(200);
    const expected = await resolvedProvider(custom.key);
    if (expected === "NAMESPACE_A") {
      // The defaults pick FNS too: nothing moved, nothing is sent.
      await new Promise((r) => setTimeout(r, 500));
      expect(bySettings(mineNow.events)).toEqual([]);
    } else {
      await until("the settings' winner.changed", () => bySettings(mineNow.events).length >= 1);
      expect(bySettings(mineNow.events)[0]!.data).toMatchObject({
        domain: NAME,
        cause: "settings",
        block: null,
        transactionHash: null,
        winner: { from: { provider: "NAMESPACE_A" }, to: { provider: expected } },
      });
      const settingsHook = () =>
        hooked("/custom")
          .slice(before)
          .find((r) => r.json.data.cause === "settings");
      await until("the settings' event at the receiver", () => settingsHook() !== undefined);
      const got = settingsHook()!;
      expect(got.verified).toBe(true);
      expect(got.json.data).toMatchObject({ cause: "settings", winner: { to: { provider: expected } } });
    }
    // Putting the exception back moves it to FNS again (when it had moved away).
    const back = await owner.put(`projects/${custom.id}/settings`, FNS_WINS);
    expect(back.statusCode).toBe(200);
    if (expected !== "NAMESPACE_A") {
      await until("the way back", () => bySettings(mineNow.events).length >= 2);
      expect(bySettings(mineNow.events)[1]!.data.winner.to).toMatchObject({ provider: "NAMESPACE_A" });
    }
    // The other project's stream and receiver heard nothing of it.
    await new Promise((r) => setTimeout(r, 500));
    expect(bySettings(other.events)).toEqual([]);
    expect(hooked("/plain").filter((r) => r.json.data.cause === "settings")).toEqual([]);
  }, 60_000);

  it("a reorg that undoes the mint retracts its winner.changed; the corrected state brings the winner back", async () => {
    const name = "forked.x";
    const stream = feed(custom.key, "?domains=forked.x&types=winner.changed,change.retracted");
    await stream.opened;
    await mine([unsMint(manager(), ALICE, name, {})]);
    await waitFor(async () => ((await resolvedProvider(custom.key, name)) ? true : null), 8_000, "UNS");
    const snapshot = await rpcCall<string>(polygon, "evm_snapshot");
    await mine([
      { to: fns(), data: callData("FNSRegistry", "mintWithRecords", [DEPLOYER, "forked", "x", [], []]) },
    ]);
    await until("the orphaned winner.changed", () => winners(stream.events).length >= 1);
    const [orphan] = winners(stream.events);
    expect(orphan!.data.winner.to).toMatchObject({ provider: "NAMESPACE_A" });
    expect(await rpcCall<boolean>(polygon, "evm_revert", [snapshot])).toBe(true);
    for (let i = 0; i < 3; i++) await mine([]);
    await until("the retraction and the corrected winner", () => winners(stream.events).length >= 2, 15_000);
    // The FNS creation's retraction, and the retraction of the winner.changed it caused.
    const retractions = stream.events.filter((e) => e.type === "change.retracted");
    expect(retractions.map((e) => e.data.retracted.type).sort()).toEqual([
      "domain.created",
      "winner.changed",
    ]);
    const retraction = retractions.find((e) => e.data.retracts === orphan!.data.id);
    expect(retraction?.data).toMatchObject({
      retracts: orphan!.data.id,
      domain: name,
      retracted: { type: "winner.changed" },
    });
    const corrected = winners(stream.events)[1]!;
    expect(Number(corrected.id)).toBeGreaterThan(Number(retraction!.id));
    expect(corrected.data).toMatchObject({
      cause: "map",
      winner: { from: { provider: "NAMESPACE_A" }, to: { provider: "NAMESPACE_B" } },
    });
    expect(await resolvedProvider(custom.key, name)).toBe("NAMESPACE_B");
  }, 60_000);

  it("the dry run and the stream agree: the settings change appends an event per changed name", async () => {
    const dry = await owner.post(`projects/${custom.id}/settings/dry-run`, { settings: {} });
    expect(dry.statusCode).toBe(200);
    const changed = dry.json().data.changed as number;
    const stream = feed(custom.key);
    await stream.opened;
    const { newest } = await t.store.changeLog.changeLogBounds();
    const mark = bySettings(stream.events).length;
    const put = await owner.put(`projects/${custom.id}/settings`, {});
    expect(put.statusCode).toBe(200);
    // The events come after the save, from the job an API process runs: on the stream.
    await until(
      "the settings' events on the stream",
      () => bySettings(stream.events).length >= mark + changed,
    );
    await new Promise((r) => setTimeout(r, 300));
    const appended = (await t.store.changeLog.findChangeEventsAfter(newest, 100)).filter(
      (e) => e.type === "winner.changed" && e.projectId === custom.id,
    );
    // clash.x and forked.x collide, and the defaults pick UNS for them (the settings test above).
    expect(changed).toBeGreaterThan(0);
    expect(appended.length).toBe(changed);
    expect(
      bySettings(stream.events)
        .slice(mark)
        .map((e) => Number(e.id)),
    ).toEqual(appended.map((e) => e.id));

    // The command line's `project rules set` appends them the same way.
    const rules = createProjectRulesCommand({ store: t.store, config: t.ctx.config });
    const before = (await t.store.changeLog.changeLogBounds()).newest;
    const quiet = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(await rules.run(["rules", "set", String(custom.id), JSON.stringify(FNS_WINS)])).toBe(0);
    } finally {
      process.stdout.write = quiet;
    }
    // The command line appends the job; the app's runner (this API process) appends the events.
    const byCliNow = async () =>
      (await t.store.changeLog.findChangeEventsAfter(before, 100)).filter(
        (e) => e.type === "winner.changed" && e.projectId === custom.id,
      );
    await waitFor(
      async () => ((await byCliNow()).length >= changed ? true : null),
      8_000,
      "the CLI's events",
    );
    await new Promise((r) => setTimeout(r, 300));
    const byCli = await byCliNow();
    expect(byCli.length).toBe(changed);
    expect(
      byCli.every((e) => e.payload.cause === "settings" && e.payload.winner?.to?.provider === "NAMESPACE_A"),
    ).toBe(true);
  });
});

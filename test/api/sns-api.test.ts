import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "@solana/kit";
import type { Hex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callData } from "../../src/devnet/deploy.js";
import type { Devnet } from "../../src/devnet/devnet.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { domainKeyOf } from "../../src/providers/sns/sns-program.js";
import { parseProjectRules } from "../../src/scoring/project-rules.js";
import { crawlToHead, senderFor, startPausedDevnet } from "../crawler/crawler-harness.js";
import { type SnsEndpoint, startSnsEndpoint } from "../helpers/sns-world.js";
import type { SnsSync } from "../../src/crawler/sns-sync.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";

/**
 * NAMESPACE_D on SOLANA through every read endpoint, over the map the SNS source builds from the
 * devnet's Solana endpoint, beside an FNS `alice.sol` on the devnet's POLYGON (anvil, Freename's
 * registry, crawled by the EVM crawler): resolve, deep-resolve, reverse-resolve with base58
 * addresses, batch, the network/provider filters and project settings, the collision of the two
 * `alice.sol`, provenance (slot and name account) and time travel by slot.
 */

const V1 = "/svc/api/v1";
const FNS_OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

describe.each<Backend>(["sqlite", "postgres"])(
  "SNS names through the API (NAMESPACE_D on SOLANA): %s",
  (backend) => {
    let sns: SnsEndpoint;
    let devnet: Devnet;
    let dir: string;
    let t: TestApp;
    let sync: SnsSync;
    let firstSlot: number;

    beforeAll(async () => {
      sns = await startSnsEndpoint({ hostile: false });
      dir = mkdtempSync(join(tmpdir(), "omniname-sns-api-"));
      devnet = await startPausedDevnet(dir, ["POLYGON"]);
      const polygon = devnet.manifest.networks.POLYGON!.rpcUrl;
      const sources = sourcesFromManifest(devnet.manifest);
      const registry = sources.find((s) => s.id === "fns-polygon")!.contracts.addresses.registry as Hex;
      const sender = await senderFor(polygon);
      // Freename's `.sol` TLD: an FNS alice.sol on POLYGON, the same name as the SNS alice.sol.
      await sender.send([
        {
          to: registry,
          data: callData("FNSRegistry", "mintWithRecords", [
            FNS_OWNER,
            "alice",
            "sol",
            ["crypto.ETH.address"],
            [FNS_OWNER],
          ]),
        },
      ]);
      await sender.mine();
      t = await createTestApp({
        backend,
        seed: async (store) => {
          await crawlToHead(store, sources);
          sync = sns.syncFor(store);
          firstSlot = (await sync.scanOnce()).slot;
        },
        now: Date.now(),
      });
    }, 120_000);
    afterAll(async () => {
      await t?.close();
      await devnet?.stop();
      await sns?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const api = async (path: string) => {
      const r = await t.get(`${V1}/${path}`);
      return { status: r.statusCode, body: r.json() };
    };
    /** Saves project settings the console's settings page would accept (the same validation). */
    const settings = async (s: Record<string, unknown>) => {
      expect(parseProjectRules(s), JSON.stringify(s)).toMatchObject({ ok: true });
      await t.store.projects.updateProjectSettings(t.projectId, s);
      t.app.apiKeys.invalidateProject(t.projectId);
    };

    it("resolves a .sol name on SOLANA / NAMESPACE_D, by wire value and alias", async () => {
      for (const q of [
        "network=SOLANA&provider=NAMESPACE_D",
        "network=sol&provider=SNS",
        "provider=namespace_d",
      ]) {
        const r = await api(`resolve?domain=alice.sol&${q}`);
        expect(r.status, q).toBe(200);
        expect(r.body.data).toMatchObject({
          domain: "alice.sol",
          network: "SOLANA",
          provider: "NAMESPACE_D",
          ownerAddress: SNS_WALLETS.alice,
        });
        expect(r.body.data.records["token.SOL.0"]).toBe(SNS_WALLETS.alice);
      }
      const sub = await api("resolve?domain=pay.alice.sol&network=SOLANA");
      expect([sub.status, sub.body.data?.ownerAddress]).toEqual([200, SNS_WALLETS.alice]);
      expect((await api("resolve?domain=nobody.sol&network=SOLANA")).status).toBe(404);
    });

    it("deep-resolves both alice.sol, and filters them by network and provider", async () => {
      const deep = await api("deep-resolve?domain=alice.sol");
      expect(deep.status).toBe(200);
      const pairs = deep.body.data.map(
        (d: { provider: string; network: string }) => `${d.provider}/${d.network}`,
      );
      expect(pairs.sort()).toEqual(["NAMESPACE_A/POLYGON", "NAMESPACE_D/SOLANA"]);
      const onlySol = await api("deep-resolve?domain=alice.sol&network=SOLANA");
      expect(onlySol.body.data.map((d: { provider: string }) => d.provider)).toEqual(["NAMESPACE_D"]);
      const onlyFns = await api("deep-resolve?domain=alice.sol&provider=NAMESPACE_A");
      expect(onlyFns.body.data.map((d: { network: string }) => d.network)).toEqual(["POLYGON"]);
      expect((await api("resolve?domain=alice.sol&network=SOLANA&provider=NAMESPACE_A")).status).toBe(404);
    });

    it("answers the collision once per the project's settings", async () => {
      const winner = async () => {
        const r = await api("resolve?domain=alice.sol");
        expect(r.status).toBe(200);
        return `${r.body.data.provider}/${r.body.data.ownerAddress}`;
      };
      try {
        await settings({ providerPriority: ["NAMESPACE_D", "NAMESPACE_A"] });
        expect(await winner()).toBe(`NAMESPACE_D/${SNS_WALLETS.alice}`);
        await settings({ providerPriority: ["NAMESPACE_A", "NAMESPACE_D"] });
        expect(await winner()).toBe(`NAMESPACE_A/${FNS_OWNER}`);
        // Disabling a side leaves the other, whatever the priority.
        await settings({ providerPriority: ["NAMESPACE_A"], providers: { disabled: ["NAMESPACE_A"] } });
        expect(await winner()).toBe(`NAMESPACE_D/${SNS_WALLETS.alice}`);
        await settings({ networks: { disabled: ["SOLANA"] } });
        expect(await winner()).toBe(`NAMESPACE_A/${FNS_OWNER}`);
        expect((await api("resolve?domain=bob.sol")).status).toBe(404);
        await settings({ providers: { disabled: ["NAMESPACE_D"] } });
        expect(await winner()).toBe(`NAMESPACE_A/${FNS_OWNER}`);
        expect((await api("resolve?domain=carol.sol&network=SOLANA")).status).toBe(404);
        await settings({ providers: { enabled: ["NAMESPACE_D"] } });
        expect(await winner()).toBe(`NAMESPACE_D/${SNS_WALLETS.alice}`);
        const rev = await api(`reverse-resolve?walletAddress=${FNS_OWNER}`);
        expect(rev.body.data).toEqual([]);
      } finally {
        await settings({});
      }
    });

    it("reverse-resolves a base58 address as given, its primary name first", async () => {
      const r = await api(`reverse-resolve?walletAddress=${SNS_WALLETS.alice}`);
      expect(r.status).toBe(200);
      const names = r.body.data.map((d: { domain: string }) => d.domain);
      expect(names[0]).toBe("alice.sol");
      expect([...names].sort()).toEqual(["alice.sol", "pay.alice.sol"]);
      expect(
        (await api(`reverse-resolve?walletAddress=${SNS_WALLETS.alice}&network=POLYGON`)).body.data,
      ).toEqual([]);
      const bad = await api("reverse-resolve?walletAddress=0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl");
      expect([bad.status, bad.body.error.code]).toEqual([400, "INVALID_ADDRESS"]);
    });

    it("answers batch resolve and reverse-resolve per input, as the single endpoints do", async () => {
      const post = (path: string, payload: unknown) =>
        t.app.inject({
          method: "POST",
          url: `${V1}/batch/${path}`,
          headers: { "api-key": t.key, "content-type": "application/json" },
          payload: JSON.stringify(payload),
        });
      const domains = ["alice.sol", "bob.sol", "nobody.sol", "carol.sol"];
      const res = (await post("resolve", { domains })).json();
      for (const [i, item] of res.data.entries()) {
        const single = await t.get(`${V1}/resolve?domain=${domains[i]}`);
        if (single.statusCode === 200)
          expect(item).toEqual({ input: domains[i], result: true, data: single.json().data });
        else expect([item.result, item.error.code]).toEqual([false, single.json().error.code]);
      }
      expect(res.data.map((i: { result: boolean }) => i.result)).toEqual([true, true, false, true]);
      const wallets = [SNS_WALLETS.carol, "not-base58!", SNS_WALLETS.bob];
      const rev = (await post("reverse-resolve", { walletAddresses: wallets })).json();
      expect(rev.data[0].data.map((d: { domain: string }) => d.domain)).toContain("bob.sol");
      expect([rev.data[1].result, rev.data[1].error.code]).toEqual([false, "INVALID_ADDRESS"]);
      expect(rev.data[2].result).toBe(true);
    });

    it("gives provenance as the slot and the name account", async () => {
      const r = await api("resolve?domain=alice.sol&network=SOLANA&provenance=true");
      expect(r.status).toBe(200);
      const p = r.body.data.provenance;
      const account = domainKeyOf("alice.sol");
      expect(p.owner).toMatchObject({
        slot: firstSlot,
        account,
        blockNumber: firstSlot,
        blockHash: `slot:${firstSlot}`,
      });
      expect(p.records["token.SOL.0"]).toMatchObject({ slot: firstSlot, account });
      expect(Date.parse(p.owner.blockTime)).toBeGreaterThan(Date.UTC(2024, 0, 1));
      expect(p.asOf).toMatchObject({ block: firstSlot, blockHash: `slot:${firstSlot}` });
    });

    it("time-travels by SOLANA slot: the map as it was at that slot", async () => {
      sns.writer.transfer("eve.sol", SNS_WALLETS.dave as Address);
      const moved = await sync.scanOnce();
      expect(moved.changed).toBe(1);
      const now = await api("resolve?domain=eve.sol&network=SOLANA");
      expect(now.body.data.ownerAddress).toBe(SNS_WALLETS.dave);
      const then = await api(`resolve?domain=eve.sol&atBlock=SOLANA:${firstSlot}`);
      expect([then.status, then.body.data?.ownerAddress]).toEqual([200, SNS_WALLETS.eve]);
      const after = await api(`resolve?domain=eve.sol&atBlock=SOL:${moved.slot}`);
      expect(after.body.data.ownerAddress).toBe(SNS_WALLETS.dave);
      const before = await api(`resolve?domain=eve.sol&atBlock=SOLANA:${firstSlot - 1}`);
      expect(before.status).toBe(400);
      expect(before.body.error.code).toBe("AT_BEFORE_INDEX");
      const ahead = await api(`resolve?domain=eve.sol&atBlock=SOLANA:${moved.slot + 1000}`);
      expect([ahead.status, ahead.body.error?.code]).toEqual([400, "AT_AFTER_INDEX"]);
      const past = await api(`reverse-resolve?walletAddress=${SNS_WALLETS.dave}&atBlock=SOLANA:${firstSlot}`);
      expect(past.body.data.map((d: { domain: string }) => d.domain)).not.toContain("eve.sol");
    });
  },
);

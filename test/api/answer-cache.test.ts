import type { AppContext } from "../../src/app-context.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { buildApp } from "../../src/api/app.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createStore } from "../../src/store/create-store.js";
import { AGE_STEP_MS } from "../../src/scoring/rules/age.rule.js";
import { ADDR, NOW, T0 } from "./helpers/world.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

// Answers without explain are bytes memoized per stored domain (routes/v1/record-json.ts) over
// the SQLite store's read cache: every change must still show in the very next answer.
describe.each<Backend>(["sqlite", "postgres"])("answers stay exact to the last commit: %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("serves the same bytes again until a write, then the new state at once", async () => {
    const first = await t.get(`${V1}/resolve?domain=alice.wallet`);
    const again = await t.get(`${V1}/resolve?domain=alice.wallet`);
    expect(again.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(first.json().data.ownerAddress).toBe(ADDR.alice);

    const id = t.ids.get("alice-fns-polygon")!;
    const before = (await t.store.domainMap.findDomainById(id))!;
    await t.store.domainMap.upsertDomain({ ...before, owner: ADDR.carol });
    expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).json().data.ownerAddress).toBe(ADDR.carol);
    expect((await t.get(`${V1}/resolve?domain=alice.wallet&network=POLYGON`)).json().data.ownerAddress).toBe(
      ADDR.carol,
    );

    await t.store.domainMap.setNativeRecord(id, "record.TXT.0", "changed", [
      { key: "record.TXT.0", value: "changed" },
    ]);
    const deep = (await t.get(`${V1}/deep-resolve?domain=alice.wallet`)).json().data;
    expect(deep[0].records["record.TXT.0"]).toBe("changed");

    await t.store.domainMap.updateDomainSignals(id, {
      baseScore: 10,
      spam: true,
      csamOk: true,
      kyc: false,
      tags: ["x"],
    });
    const after = (await t.get(`${V1}/resolve?domain=alice.wallet`)).json().data;
    expect(after.ownerAddress).toBe(ADDR.bob); // the other domain of the name now scores higher
    const moved = (await t.get(`${V1}/deep-resolve?domain=alice.wallet`)).json().data;
    expect(moved.at(-1)).toMatchObject({ ownerAddress: ADDR.carol, spam: true, info: { tags: ["x"] } });

    await t.store.domainMap.deleteDomain(id);
    const left = (await t.get(`${V1}/deep-resolve?domain=alice.wallet`)).json().data;
    expect(left.map((d: { network: string }) => d.network)).not.toContain("POLYGON");
    expect(left.length).toBe(deep.length - 1);
  });
});

// reverse-resolve reads the SQLite store's owner and reverse-record caches and sends memoized
// record bytes: the owner path must be as exact to the last commit as the name path.
describe.each<Backend>(["sqlite", "postgres"])(
  "reverse answers stay exact to the last commit: %s",
  (backend) => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend });
    });
    afterAll(async () => {
      await t?.close();
    });

    const reverse = async (addr: string) =>
      (await t.get(`${V1}/reverse-resolve?walletAddress=${addr}`)).json().data as Array<{
        domain: string;
        network: string;
        ownerAddress: string;
        score: number;
        spam: boolean;
        records: Record<string, string>;
        info: { tags: string[] };
      }>;
    const networksOf = (list: Array<{ domain: string; network: string }>) =>
      list.map((d) => `${d.domain}@${d.network}`);

    it("serves the same bytes again until a write, then the new state at once", async () => {
      const url = `${V1}/reverse-resolve?walletAddress=${ADDR.alice}`;
      const first = await t.get(url);
      expect((await t.get(url)).rawPayload.equals(first.rawPayload)).toBe(true);
      const aliceBefore = networksOf(first.json().data);
      const carolBefore = networksOf(await reverse(ADDR.carol));
      expect(aliceBefore).toContain("alice.wallet@POLYGON");
      expect(aliceBefore[0]).toBe("alice.wallet@POLYGON"); // Alice's primary name

      // The domain moves to Carol: it leaves Alice's answer and joins Carol's.
      const id = t.ids.get("alice-fns-polygon")!;
      const before = (await t.store.domainMap.findDomainById(id))!;
      await t.store.domainMap.upsertDomain({ ...before, owner: ADDR.carol });
      const aliceAfter = networksOf(await reverse(ADDR.alice));
      expect(aliceAfter).not.toContain("alice.wallet@POLYGON");
      expect(aliceAfter.length).toBe(aliceBefore.length - 1);
      const carol = await reverse(ADDR.carol);
      expect(networksOf(carol)).toContain("alice.wallet@POLYGON");
      expect(carol.length).toBe(carolBefore.length + 1);
      const moved = () => carol.find((d) => d.domain === "alice.wallet" && d.network === "POLYGON")!;
      expect(moved().ownerAddress).toBe(ADDR.carol);

      // A record, then the signals, change.
      await t.store.domainMap.setNativeRecord(id, "record.TXT.0", "changed", [
        { key: "record.TXT.0", value: "changed" },
      ]);
      const withRecord = (await reverse(ADDR.carol)).find(
        (d) => d.domain === "alice.wallet" && d.network === "POLYGON",
      )!;
      expect(withRecord.records["record.TXT.0"]).toBe("changed");
      await t.store.domainMap.updateDomainSignals(id, {
        baseScore: 10,
        spam: true,
        csamOk: true,
        kyc: false,
        tags: ["x"],
      });
      const flagged = (await reverse(ADDR.carol)).find(
        (d) => d.domain === "alice.wallet" && d.network === "POLYGON",
      )!;
      expect(flagged).toMatchObject({ spam: true, info: { tags: ["x"] } });
      expect(flagged.score).toBeLessThan(moved().score);

      // Carol's reverse record names it: it becomes her primary name, first in the answer.
      await t.store.domainMap.setReverse({
        network: "POLYGON",
        provider: "NAMESPACE_A",
        address: ADDR.carol,
        domainId: id,
      });
      expect(networksOf(await reverse(ADDR.carol))[0]).toBe("alice.wallet@POLYGON");
      await t.store.domainMap.removeReverse(ADDR.carol, "POLYGON", "NAMESPACE_A");
      expect(networksOf(await reverse(ADDR.carol))[0]).not.toBe("alice.wallet@POLYGON");

      await t.store.domainMap.deleteDomain(id);
      const left = networksOf(await reverse(ADDR.carol));
      expect(left).not.toContain("alice.wallet@POLYGON");
      expect(left.length).toBe(carolBefore.length);
    });
  },
);

describe("answers follow the clock", () => {
  let now = NOW;
  let close: () => Promise<void>;
  let get: (
    url: string,
  ) => Promise<{ statusCode: number; json(): { data: { score: number; provider: string } } }>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "omniname-answers-"));
    const store = await createStore({ databaseUrl: undefined, dataDir: dir });
    const base = {
      name: "timed.wallet",
      sld: "timed",
      tld: "wallet",
      owner: ADDR.alice,
      contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
      resolver: null,
      registeredBlock: 1,
      lastUpdateBlock: 1,
      lastUpdateAt: T0,
      spam: false,
      csamOk: true,
      kyc: false,
      tags: [],
    };
    // The better-scored domain expires at NOW + 1 s; the other one gains age points over time.
    await store.domainMap.upsertDomain({
      ...base,
      provider: "NAMESPACE_A",
      network: "POLYGON",
      tokenId: `0x${"1".padStart(64, "0")}`,
      registeredAt: NOW,
      expiresAt: NOW + 1000,
      baseScore: 70,
    });
    await store.domainMap.upsertDomain({
      ...base,
      provider: "NAMESPACE_B",
      network: "ETHEREUM",
      tokenId: `0x${"2".padStart(64, "0")}`,
      registeredAt: NOW - 10,
      expiresAt: null,
      baseScore: 50,
    });
    const pepper = randomBytes(16).toString("hex");
    const project = await store.projects.createProject({ name: "clock", plan: "internal" });
    const { key } = await createApiKey(store, pepper, project.id, "k");
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store,
      ranker: createScoringRanker(),
      pepper,
      clock: () => now,
    };
    const app = await buildApp(ctx, { services: createConsoleServices(ctx), closeServices: true });
    get = (url) => app.inject({ url, headers: { "api-key": key } }) as never;
    close = async () => {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    };
  });
  afterAll(async () => {
    await close?.();
  });

  it("drops a domain at its expiry and moves a score when the age rule steps, with no write", async () => {
    const at = async (t: number) => {
      now = t;
      return (await get(`${V1}/resolve?domain=timed.wallet`)).json().data;
    };
    expect((await at(NOW + 999)).provider).toBe("NAMESPACE_A");
    expect((await at(NOW + 999)).provider).toBe("NAMESPACE_A");
    expect((await at(NOW + 1000)).provider).toBe("NAMESPACE_B");
    const young = await at(NOW - 10 + AGE_STEP_MS - 1);
    const older = await at(NOW - 10 + AGE_STEP_MS);
    expect(older.score).toBe(young.score + 1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyRange } from "../../src/crawler/apply-range.js";
import { fencedStore } from "../../src/crawler/source-lease.js";
import { createSource } from "../../src/crawler/sources.js";
import type { DomainFilter, DomainWithRecords } from "../../src/domain/types.js";
import type { SourceContracts } from "../../src/providers/provider.js";
import { unsAdapter } from "../../src/providers/uns/uns.adapter.js";
import { NEUTRAL_SIGNALS } from "../crawler/crawler-harness.js";
import { ADDR } from "./helpers/world.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

/**
 * The v1 answer cache (src/api/v1-answer-cache.ts) serves a repeated query's body without reading
 * the map again, and never a body older than the last commit or settings change: a change followed
 * at once by a request sees the new answer. The store's reads are counted to tell a cached answer
 * from a computed one.
 */
describe.each<Backend>(["sqlite", "postgres"])("the v1 answer cache: %s", (backend) => {
  let t: TestApp;
  let reads = 0;
  beforeAll(async () => {
    t = await createTestApp({ backend });
    const store = t.store;
    const byName = store.domainMap.findDomainsByName.bind(store.domainMap);
    store.domainMap.findDomainsByName = (
      names: string[],
      filter: DomainFilter,
    ): Promise<DomainWithRecords[]> => {
      reads++;
      return byName(names, filter);
    };
    const byOwner = store.domainMap.findDomainsByOwner.bind(store.domainMap);
    store.domainMap.findDomainsByOwner = (
      owner: string,
      filter: DomainFilter,
    ): Promise<DomainWithRecords[]> => {
      reads++;
      return byOwner(owner, filter);
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The answer, and whether it read the map. */
  async function ask(url: string): Promise<{ body: string; read: boolean }> {
    const before = reads;
    const res = await t.get(url);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    return { body: res.body, read: reads > before };
  }

  /**
   * On PostgreSQL the change channel also tells this process of its own writes a moment later,
   * which empties the caches once more: wait until a repeated query is a cached one.
   */
  async function settled(url: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      await ask(url);
      if (!(await ask(url)).read) return;
      await new Promise((r) => setTimeout(r, 30));
    }
    throw new Error(`${url} is never answered from the cache`);
  }

  it("answers a repeated resolve, deep-resolve and reverse-resolve without reading the map", async () => {
    for (const url of [
      `${V1}/resolve?domain=alice.wallet`,
      `${V1}/deep-resolve?domain=alice.wallet&network=POLYGON`,
      `${V1}/reverse-resolve?walletAddress=${ADDR.alice}`,
    ]) {
      await settled(url);
      const first = await ask(url);
      const again = await ask(url);
      expect(again).toEqual({ body: first.body, read: false });
    }
  });

  it("computes an explained answer every time", async () => {
    const url = `${V1}/resolve?domain=alice.wallet&explain=true`;
    await ask(url);
    expect((await ask(url)).read).toBe(true);
  });

  it("a commit followed at once by a request gets the new answer", async () => {
    const url = `${V1}/resolve?domain=alice.wallet`;
    await settled(url);
    const before = JSON.parse((await ask(url)).body).data;
    expect(before.ownerAddress).toBe(ADDR.alice);
    const id = t.ids.get("alice-fns-polygon") as number;
    const domain = await t.store.domainMap.findDomainById(id);
    if (domain === null) throw new Error("no alice-fns-polygon");
    await t.store.domainMap.upsertDomain({ ...domain, owner: ADDR.carol });
    const after = await ask(url);
    expect(after.read).toBe(true);
    expect(JSON.parse(after.body).data.ownerAddress).toBe(ADDR.carol);
    await t.store.domainMap.upsertDomain({ ...domain, owner: ADDR.alice });
    expect(JSON.parse((await ask(url)).body).data.ownerAddress).toBe(ADDR.alice);
  });

  it("a settings change followed at once by a request gets the new answer", async () => {
    const url = `${V1}/resolve?domain=alice.wallet`;
    await settled(url);
    expect(JSON.parse((await ask(url)).body).data.network).toBe("POLYGON");
    await t.services.projects.putSettings(t.projectId, { networks: { disabled: ["POLYGON"] } });
    const after = JSON.parse((await ask(url)).body).data;
    expect(after.network).not.toBe("POLYGON");
    await t.services.projects.putSettings(t.projectId, {});
    expect(JSON.parse((await ask(url)).body).data.network).toBe("POLYGON");
  });

  it("keeps its answers over a crawler range with no events (a checkpoint and block hashes only)", async () => {
    // What the crawler commits for each empty block under `npm start` (a devnet block a second per
    // chain): the lease renewed, then the range's block hashes and checkpoint in one fenced
    // transaction. None of it is read by an answer, so the answers stay.
    const source = createSource(
      unsAdapter.provider,
      "POLYGON",
      unsAdapter.mainnet.POLYGON as SourceContracts,
      "http://127.0.0.1:1",
    );
    const holder = "v1-answer-cache-test";
    const url = `${V1}/resolve?domain=alice.wallet`;
    await settled(url);
    const first = await ask(url);
    for (let block = 1; block <= 3; block++) {
      const now = Date.now();
      await t.store.crawlerLog.acquireSourceLease(source.id, holder, now, 60_000);
      const hash = `0x${block.toString(16).padStart(64, "0")}`;
      await applyRange(
        fencedStore(t.store, source.id, holder, Date.now),
        source,
        {
          entries: [],
          checkpoint: {
            sourceId: source.id,
            chainId: source.chainId,
            blockNumber: block,
            blockHash: hash,
            updatedAt: now,
            state: "live",
            error: null,
          },
          recentBlocks: [{ blockNumber: block, blockHash: hash, parentHash: `0x${"0".repeat(64)}` }],
          pruneBelow: block - 1,
        },
        NEUTRAL_SIGNALS,
      );
      expect(await ask(url)).toEqual({ body: first.body, read: false });
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildTestQuery, decodeTestAnswer } from "../../src/dns/dns.testing.js";
import { answerQuery } from "../../src/dns/query-handler.js";
import { createStoreZoneLookup } from "../../src/dns/store-zone-lookup.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createResolution } from "../../src/resolution/resolution.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS, testDomain, tokenIdOf } from "../helpers/store-world.js";

const NOW = Date.UTC(2025, 0, 1);
let tokens = 1000;

/** Names below a name (DNS empty non-terminals) are answered from the store at query time. */
describe.each(STORE_BACKENDS)("live names below a name: $name", (backend) => {
  let store: Store;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await backend.open());
  });
  afterAll(async () => {
    await cleanup();
  });

  async function register(name: string, records: Record<string, string> = {}): Promise<void> {
    const dot = name.lastIndexOf(".");
    const id = await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(tokens++), name, sld: name.slice(0, dot), tld: name.slice(dot + 1) }),
    );
    await store.domainMap.replaceRecords(
      id,
      Object.entries(records).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value })),
    );
  }

  /** Asks the live zones of `store` (a fixed clock), decoded. */
  function asker(opts: { missRefreshMs?: number } = {}) {
    const lookup = createStoreZoneLookup({
      resolution: createResolution({ store: store.domainMap, ranker: createScoringRanker() }),
      store,
      nameServers: ["ns1.omniname.test"],
      hostmaster: "hostmaster.omniname.test",
      clock: () => NOW,
      ...opts,
    });
    return async (name: string, type: string) =>
      decodeTestAnswer((await answerQuery(buildTestQuery(name, type), lookup, "udp")) as Buffer);
  }

  it("hasDescendant: a range of whole labels, never a bare suffix", async () => {
    await register("x.y.z.hd");
    await register("q.ry.hd");
    await register("café.hd");
    await register("a.café.hd");
    expect(await store.domainMap.hasDescendant("y.z.hd")).toBe(true);
    expect(await store.domainMap.hasDescendant("z.hd")).toBe(true);
    expect(await store.domainMap.hasDescendant("hd")).toBe(true);
    expect(await store.domainMap.hasDescendant("café.hd")).toBe(true);
    expect(await store.domainMap.hasDescendant("x.y.z.hd")).toBe(false);
    // "q.ry.hd" ends with "y.hd" but not with ".y.hd".
    expect(await store.domainMap.hasDescendant("y.hd")).toBe(false);
    expect(await store.domainMap.hasDescendant("ry.hd")).toBe(true);
    expect(await store.domainMap.hasDescendant("other.hd")).toBe(false);
  });

  it("a name registered below a name is answered at once, its parent NODATA with the SOA", async () => {
    await register("seed.livenet", { "record.A.0": "192.0.2.1" });
    await store.crawlerLog.setCheckpoint({
      sourceId: "s",
      chainId: 1,
      blockNumber: 5,
      blockHash: "0x1",
      updatedAt: NOW,
      state: "live",
      error: null,
    });
    const ask = asker();

    // The zone is loaded before the new names exist: nothing may depend on a later reload.
    expect((await ask("b.livenet", "A")).rcode).toBe("NXDOMAIN");
    await register("a.b.livenet", { "record.A.0": "192.0.2.7" });
    await register("x.café.livenet", { "record.A.0": "192.0.2.8" });

    const parent = await ask("b.livenet", "A");
    expect(parent).toMatchObject({ rcode: "NOERROR", aa: true, answer: [] });
    expect(parent.ns).toHaveLength(1);
    expect(parent.ns[0]).toMatch(/^livenet\. \d+ IN SOA ns1\.omniname\.test\. hostmaster\.omniname\.test\. /);

    const child = await ask("a.b.livenet", "A");
    expect(child).toMatchObject({ rcode: "NOERROR", aa: true, answer: ["a.b.livenet. 300 IN A 192.0.2.7"] });

    // An IDN parent, asked under its A-label.
    expect(await ask("xn--caf-dma.livenet", "A")).toMatchObject({ rcode: "NOERROR", aa: true, answer: [] });

    for (const absent of ["nothing.livenet", "a.livenet", "c.b.livenet"]) {
      const r = await ask(absent, "A");
      expect(r).toMatchObject({ rcode: "NXDOMAIN", aa: true, answer: [] });
      expect(r.ns[0]).toMatch(/^livenet\. \d+ IN SOA /);
    }
  });

  it("a TLD first registered after the zones were read is answered on the next query, not refused", async () => {
    // The periodic refresh never comes due here (a fixed clock): only the miss refresh can help.
    const ask = asker({ missRefreshMs: 0 });

    expect((await ask("first.newtld", "A")).rcode).toBe("REFUSED");
    // Refused again while nothing changed: the miss reads the zones again only after a commit.
    let loads = 0;
    const list = store.scoring.listTldFirstRegistrations.bind(store);
    store.scoring.listTldFirstRegistrations = async () => {
      loads++;
      return list();
    };
    try {
      expect((await ask("first.newtld", "A")).rcode).toBe("REFUSED");
      expect(loads).toBe(0);
      await register("first.newtld", { "record.A.0": "192.0.2.9" });
      // PostgreSQL also hears its own commits back on the change channel (a new read version each):
      // let them arrive, so that the reads counted below are the miss's alone.
      await new Promise((r) => setTimeout(r, 300));
      expect(await ask("first.newtld", "A")).toMatchObject({
        rcode: "NOERROR",
        aa: true,
        answer: ["first.newtld. 300 IN A 192.0.2.9"],
      });
      expect(loads).toBe(1);
      // A name of another TLD that nobody registered: refused, with no further read (no commit since).
      expect((await ask("x.stillnot", "A")).rcode).toBe("REFUSED");
      expect(loads).toBe(1);
    } finally {
      store.scoring.listTldFirstRegistrations = list;
    }
  });
});

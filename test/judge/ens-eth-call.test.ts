import { zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureDomain } from "../../src/devnet/fixtures.js";
import { namehash, reverseNode } from "../../src/devnet/token-ids.js";
import { ensAdapter } from "../../src/providers/ens/ens.adapter.js";
import {
  type ApiRecord,
  type EnsJudgeWorld,
  resolvePath,
  reversePath,
  startEnsJudgeWorld,
} from "./ens-judge-harness.js";
import { addr, type ChainView, ensCaller, readChain as readChainAt } from "./ens-chain-view.js";

// The judge: every seeded ENS name read straight from the real contracts with eth_call (no event
// decoding), compared with what omniname's API serves after crawling the chain.

describe("ENS judge: eth_call on the real contracts against the API", () => {
  let w: EnsJudgeWorld;
  const now = () => Math.floor(Date.now() / 1000);

  const call = ensCaller(() => w);
  const readChain = (d: FixtureDomain) => readChainAt(() => w, d, now());

  beforeAll(async () => {
    w = await startEnsJudgeWorld();
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it("seeds every path the judge must cover", () => {
    const choices = w.names.map((n) => n.choice);
    expect(w.names.length).toBeGreaterThan(30);
    expect(choices.some((c) => c.wrapped && c.via === "controller")).toBe(true);
    expect(choices.some((c) => !c.wrapped)).toBe(true);
    expect(choices.some((c) => c.via === "subname")).toBe(true);
    expect(choices.some((c) => c.via === "wrapperController")).toBe(true);
    expect(choices.some((c) => c.renewed)).toBe(true);
    expect(choices.some((c) => c.resolverChange)).toBe(true);
    expect(w.names.some((n) => n.d.history?.resetRecordsBefore)).toBe(true);
    expect(w.names.some((n) => n.d.expiresAt !== null && n.d.expiresAt < Date.now())).toBe(true);
  });

  it("serves every seeded ENS name with the owner, expiry and records the contracts hold", async () => {
    const differences: string[] = [];
    let compared = 0;
    for (const { d } of w.names) {
      const chain = await readChain(d);
      const res = await w.get(resolvePath(d.name));
      if (res.status !== 200) {
        differences.push(`${d.name}: API HTTP ${res.status}`);
        continue;
      }
      compared++;
      const api = res.body.data as ApiRecord;
      const wantOwner = chain.expired ? chain.lastOwner : chain.owner;
      if (api.ownerAddress !== wantOwner)
        differences.push(`${d.name}: owner API ${api.ownerAddress}, chain ${wantOwner}`);
      if (api.info.tags.includes("expired") !== chain.expired)
        differences.push(
          `${d.name}: API tags ${JSON.stringify(api.info.tags)}, chain expired=${chain.expired}`,
        );
      const sorted = (r: Record<string, string>) => JSON.stringify(Object.entries(r).sort());
      if (sorted(api.records) !== sorted(chain.records))
        differences.push(`${d.name}: records API ${sorted(api.records)}, chain ${sorted(chain.records)}`);
      const dom = await w.store.domainMap.findDomainByToken(
        "ETHEREUM",
        "NAMESPACE_C",
        ensAdapter.tokenIdOf(d.name),
      );
      const indexed = dom?.expiresAt === null || dom === null ? null : dom.expiresAt / 1000;
      if (indexed !== chain.expiresAt)
        differences.push(`${d.name}: expiry index ${indexed}, chain ${chain.expiresAt}`);
    }
    expect(differences).toEqual([]);
    expect(compared).toBe(w.names.length);
  });

  it("does not serve names past their registrar expiry to a project with the default rules", async () => {
    const differences: string[] = [];
    for (const { d } of w.names) {
      const chain = await readChain(d);
      const res = await w.getDefault(resolvePath(d.name));
      const served = res.status === 200;
      if (served === chain.expired)
        differences.push(`${d.name}: served=${served}, chain expired=${chain.expired}`);
    }
    expect(differences).toEqual([]);
  });

  it("answers reverse lookups with the forward-verified primary name and the names each address holds", async () => {
    const differences: string[] = [];
    const views = new Map<string, ChainView>();
    for (const { d } of w.names) views.set(d.name, await readChain(d));
    const addresses = new Set(w.names.flatMap(({ d }) => [d.owner, ...(d.history?.previousOwners ?? [])]));
    let primaries = 0;
    for (const address of addresses) {
      const rnode = reverseNode(address);
      const rresolver = addr(await call("ENSRegistry", w.ens.registry, "resolver", [rnode]))!;
      let primary: string | null = null;
      if (rresolver !== zeroAddress) {
        const name = String(await call("PublicResolver", rresolver, "name", [rnode]));
        // ENS forward verification: the name's own addr record must point back at the address.
        const resolver = addr(await call("ENSRegistry", w.ens.registry, "resolver", [namehash(name)]));
        const back = resolver ? addr(await call("PublicResolver", resolver, "addr", [namehash(name)])) : null;
        if (name !== "" && back === address && !views.get(name)?.expired) primary = name;
      }
      const res = await w.getDefault(reversePath(address));
      expect(res.status).toBe(200);
      const data = res.body.data as ApiRecord[];
      // The names it holds, and its forward-verified primary name even when someone else holds it.
      const held = [
        ...new Set([
          ...[...views.entries()].filter(([, v]) => !v.expired && v.owner === address).map(([n]) => n),
          ...(primary === null ? [] : [primary]),
        ]),
      ].sort();
      const served = data.map((r) => r.domain).sort();
      if (JSON.stringify(served) !== JSON.stringify(held))
        differences.push(
          `${address}: API names ${JSON.stringify(served)}, chain holds ${JSON.stringify(held)}`,
        );
      if (primary !== null) {
        primaries++;
        if (data[0]?.domain !== primary)
          differences.push(`${address}: API first ${data[0]?.domain}, chain primary name ${primary}`);
      }
    }
    expect(differences).toEqual([]);
    expect(primaries).toBeGreaterThan(3);
  });
});

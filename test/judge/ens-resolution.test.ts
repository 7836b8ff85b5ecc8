import { createRequire } from "node:module";
import { getCoderByCoinType } from "@ensdomains/address-encoder";
import { Resolution } from "@unstoppabledomains/resolution";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureDomain } from "../../src/devnet/fixtures.js";
import { devnetRpc } from "../../src/devnet/rpc.js";
import { OLD_RESOLVER_RECORD } from "../../src/devnet/seed-ens-real.js";
import { mapEnsRecord } from "../../src/providers/ens/ens-records.js";
import {
  type ApiRecord,
  type EnsJudgeWorld,
  resolvePath,
  reversePath,
  startEnsJudgeWorld,
} from "./ens-judge-harness.js";

// The judge we did not write: @unstoppabledomains/resolution 9.3.3 resolves every seeded ENS name
// on the devnet's real ENS contracts, and omniname's API must agree with it.
//
// How the library is pointed at the devnet (read in node_modules/@unstoppabledomains/resolution/
// build/Ens.js): `registryAddress` is configurable, but the NameWrapper, BaseRegistrar and
// ReverseRegistrar addresses are the mainnet ones of its bundled ens-config.json. Its provider is
// therefore the devnet RPC behind a shim that sends an eth_call to one of those mainnet addresses
// to the devnet's contract of the same role; nothing else is changed. `Resolution.reverse` asks
// UNS first (a mainnet ProxyReader on the public RPC), so reverse names are asked of the
// library's own ENS service, the code `reverse` falls back to. The library's public methods refuse
// every name outside [.a-z0-9-] (prepareAndValidateDomain), which leaves out Unicode ENS names:
// those are asked of the same ENS service directly (what the public methods call after that check).

interface Lookups {
  owner(domain: string): Promise<string>;
  addr(domain: string, ticker: string): Promise<string | undefined>;
  record(domain: string, key: string): Promise<string>;
}

interface EnsService extends Lookups {
  reverseOf(address: string): Promise<string | null>;
}

const LIBRARY_NAME = /^[.a-z0-9-]+$/;

const require = createRequire(import.meta.url);
const mainnet = (
  require("@unstoppabledomains/resolution/build/config/ens-config.json") as {
    networks: Record<string, { contracts: Record<string, { address: string }> }>;
  }
).networks["1"].contracts;

/** The canonical API key of a native ENS key (its value does not change the key, except DNS). */
function canonicalKey(nativeKey: string, sample: string): string {
  return mapEnsRecord(nativeKey, sample)[0]?.key ?? nativeKey;
}

function coinSymbol(coinType: number): string {
  return getCoderByCoinType(coinType)
    .name.replace(/Legacy$/, "")
    .toUpperCase();
}

describe("ENS judge: @unstoppabledomains/resolution against the API", () => {
  let w: EnsJudgeWorld;
  let resolution: Resolution;
  let ensService: EnsService;
  let remapped = 0;

  beforeAll(async () => {
    w = await startEnsJudgeWorld();
    const rpc = devnetRpc(w.rpcUrl);
    const byRole = new Map<string, string>([
      [mainnet.NameWrapper.address.toLowerCase(), w.ens.nameWrapper],
      [mainnet.BaseRegistrarImplementation.address.toLowerCase(), w.ens.baseRegistrar],
      [mainnet.ReverseRegistrar.address.toLowerCase(), w.ens.reverseRegistrar],
    ]);
    const provider = {
      async request(req: { method: string; params?: unknown }): Promise<unknown> {
        let params = (req.params ?? []) as unknown[];
        if (req.method === "eth_call") {
          const [tx, block] = params as [{ to: string; data: string }, unknown];
          const to = byRole.get(tx.to.toLowerCase());
          if (to) remapped++;
          params = [{ ...tx, to: to ?? tx.to }, block];
        }
        return rpc.call(req.method, params);
      },
    };
    resolution = new Resolution({
      sourceConfig: { ens: { provider, network: "mainnet", registryAddress: w.ens.registry } },
    });
    ensService = (resolution as unknown as { getService(n: string): { native: EnsService } }).getService(
      "ENS",
    ).native;
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  /** Every native key the seeding wrote for a name (the library cannot list records). */
  function nativeKeys(d: FixtureDomain): Map<string, string> {
    const keys = new Map<string, string>();
    for (const [k, v] of [...(d.history?.resetRecordsBefore ?? []), ...d.records, OLD_RESOLVER_RECORD])
      keys.set(k, v);
    return keys;
  }

  const orUndefined = async <T>(p: Promise<T>): Promise<T | undefined> => {
    try {
      return await p;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === "RecordNotFound" || code === "UnspecifiedResolver") return undefined;
      throw e;
    }
  };

  it("agrees on every seeded name's owner, addresses per coin, text records and contenthash", async () => {
    const differences: string[] = [];
    let values = 0;
    let unicode = 0;
    for (const { d } of w.names) {
      const res = await w.get(resolvePath(d.name));
      if (res.status !== 200) {
        differences.push(`${d.name}: API HTTP ${res.status}`);
        continue;
      }
      const api = res.body.data as ApiRecord;
      const lib: Lookups = LIBRARY_NAME.test(d.name) ? (resolution as unknown as Lookups) : ensService;
      if (lib === ensService) unicode++;
      const owner = String(await lib.owner(d.name)).toLowerCase();
      if (api.ownerAddress !== owner)
        differences.push(`${d.name}: owner API ${api.ownerAddress}, library ${owner}`);
      for (const [k, sample] of nativeKeys(d)) {
        let value: string | undefined;
        let key: string;
        if (k.startsWith("addr.")) {
          const symbol = coinSymbol(Number(k.slice(5)));
          key = `token.${symbol}.0`;
          value = await orUndefined(lib.addr(d.name, symbol));
          if (value !== undefined && /^0x[0-9a-fA-F]{40}$/.test(value)) value = value.toLowerCase();
        } else if (k.startsWith("text.")) {
          key = canonicalKey(k, sample);
          value = await orUndefined(lib.record(d.name, k.slice(5)));
        } else if (k === "contenthash") {
          key = canonicalKey(k, sample);
          value = await orUndefined(lib.record(d.name, "contenthash"));
        } else {
          continue; // DNS records: the library has no ENS DNS support (the eth_call judge covers them)
        }
        if (value === "") value = undefined;
        if (value !== undefined) values++;
        if (api.records[key] !== value)
          differences.push(
            `${d.name}: ${k} (${key}) API ${JSON.stringify(api.records[key])}, library ${JSON.stringify(value)}`,
          );
      }
    }
    expect(differences).toEqual([]);
    expect(values).toBeGreaterThan(100);
    expect(unicode).toBeGreaterThan(0);
    expect(unicode).toBeLessThan(w.names.length / 4);
    // The shim did route the library's NameWrapper / registrar calls to the devnet.
    expect(remapped).toBeGreaterThan(w.names.length);
  });

  it("agrees on the primary name of every address that holds a seeded name", async () => {
    const differences: string[] = [];
    let primaries = 0;
    const addresses = new Set(w.names.flatMap(({ d }) => [d.owner, ...(d.history?.previousOwners ?? [])]));
    for (const address of addresses) {
      const lib = await ensService.reverseOf(address);
      const res = await w.getDefault(reversePath(address));
      expect(res.status).toBe(200);
      const data = res.body.data as ApiRecord[];
      if (lib) {
        primaries++;
        if (data[0]?.domain !== lib)
          differences.push(`${address}: API first ${data[0]?.domain}, library ${lib}`);
      } else if (w.names.some(({ d }) => d.reverse && d.owner === address)) {
        differences.push(`${address}: the library finds no primary name`);
      }
    }
    expect(differences).toEqual([]);
    expect(primaries).toBeGreaterThan(3);
  });

  it("resolves expired names the way the registry still answers, which omniname serves only to projects that include expired names", async () => {
    const expired = w.names.filter(({ d }) => d.expiresAt !== null && d.expiresAt < Date.now());
    expect(expired.length).toBeGreaterThan(0);
    for (const { d } of expired) {
      const lib: Lookups = LIBRARY_NAME.test(d.name) ? (resolution as unknown as Lookups) : ensService;
      const owner = String(await lib.owner(d.name)).toLowerCase();
      const withExpired = await w.get(resolvePath(d.name));
      expect(withExpired.status).toBe(200);
      const api = withExpired.body.data as ApiRecord;
      expect(api.info.tags).toContain("expired");
      expect(api.ownerAddress).toBe(owner);
      expect((await w.getDefault(resolvePath(d.name))).status).toBe(404);
    }
  });
});

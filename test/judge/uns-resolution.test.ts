import { createRequire } from "node:module";
import { Resolution, ResolutionError, ResolutionErrorCode } from "@unstoppabledomains/resolution";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureWorld } from "../../src/devnet/fixtures.js";
import { unsCall } from "../../src/devnet/real-uns.js";
import { CNS_NAMES, cnsFinal } from "../../src/devnet/seed-uns.js";
import { namehashId } from "../../src/devnet/token-ids.js";
import { senderFor } from "../crawler/crawler-harness.js";
import {
  type Answer,
  apiAnswer,
  canonical,
  differences,
  type JudgedName,
  libraryKeys,
  offlineTlds,
  startUnsJudgeWorld,
  type UnsJudgeWorld,
} from "./uns-judge.harness.js";

/**
 * A judge we did not write: every UNS and CNS name the devnet seeded (the fixture world's, the
 * legacy CNS ones, the burned ones) resolved by Unstoppable Domains' own client,
 * `@unstoppabledomains/resolution` 9.3.3, through the devnet's ProxyReaders (custom RPC URLs and
 * `proxyReaderAddress` per layer: ETHEREUM = Layer1, POLYGON = Layer2), and by omniname's API over
 * the crawled index. Owner, records (the library's values mapped by omniname's key mapping),
 * addresses per coin (`addr`, `multiChainAddr`), registry, and reverse names must agree; the
 * failure lists every difference.
 *
 * The library gives Layer2 precedence for a name that exists on both chains (`bob.x`): such names
 * are resolved by a client whose two layers are the name's own chain.
 */

type Layer = { url: string; network: string; proxyReaderAddress: string };

const require = createRequire(import.meta.url);
// The library's own UNS service, for reverse records by layer (Resolution.reverse would fetch the
// token's metadata from api.unstoppabledomains.com to turn the token id into a name).
const Uns = (
  require("@unstoppabledomains/resolution/build/Uns") as { default: new (s: unknown) => UnsService }
).default;
interface UnsService {
  reverseOf(address: string, location?: string): Promise<string | null>;
}

describe("UNS and CNS names: @unstoppabledomains/resolution against omniname's API", () => {
  let w: UnsJudgeWorld;
  let layers: Record<JudgedName["network"], Layer>;
  const clients = new Map<string, Resolution>();

  const client = (l1: Layer, l2: Layer): Resolution => {
    const key = `${l1.url}|${l2.url}`;
    let c = clients.get(key);
    if (!c) {
      c = new Resolution({ sourceConfig: { uns: { locations: { Layer1: l1, Layer2: l2 } } } });
      clients.set(key, c);
    }
    return c;
  };

  beforeAll(async () => {
    offlineTlds();
    w = await startUnsJudgeWorld();
    const layer = (network: "ETHEREUM" | "POLYGON", name: string): Layer => {
      const net = w.devnet.manifest.networks[network]!;
      return {
        url: net.rpcUrl,
        network: name,
        proxyReaderAddress: net.contracts.NAMESPACE_B!.addresses.proxyReader,
      };
    };
    layers = { ETHEREUM: layer("ETHEREUM", "mainnet"), POLYGON: layer("POLYGON", "polygon-mainnet") };
  }, 180_000);
  afterAll(async () => {
    await w?.close();
  });

  /** The client that resolves `n` on its own chain. */
  const clientFor = (n: JudgedName): Resolution => {
    const onBoth = w.names.filter((o) => o.ascii === n.ascii && o.kind !== "burned").length > 1;
    if (onBoth) return client(layers[n.network], layers[n.network]);
    return client(layers.ETHEREUM, layers.POLYGON);
  };

  const unregistered = (e: unknown) =>
    e instanceof ResolutionError && e.code === ResolutionErrorCode.UnregisteredDomain;

  async function libraryAnswer(n: JudgedName): Promise<Answer> {
    const r = clientFor(n);
    let owner: string | null;
    try {
      // The library's type says `string | null`; it throws UnregisteredDomain rather than answer null.
      owner = (await r.owner(n.ascii))?.toLowerCase() ?? null;
    } catch (e) {
      if (!unregistered(e)) throw e;
      owner = null;
    }
    const keys = [...new Set([...n.nativeKeys, ...libraryKeys()])];
    let natives: Record<string, string> = {};
    try {
      natives = await r.records(n.ascii, keys);
    } catch (e) {
      // No resolver (a CNS name whose transfer dropped it): no records.
      if (!(e instanceof ResolutionError) || e.code !== ResolutionErrorCode.UnspecifiedResolver) {
        if (!unregistered(e)) throw e;
      }
    }
    let registry: string | null = null;
    try {
      registry = (await r.registryAddress(n.ascii)).toLowerCase();
    } catch (e) {
      if (!unregistered(e)) throw e;
    }
    return { owner, records: canonical(natives), registry };
  }

  it("agrees with the API on the owner, records and registry of every seeded name", async () => {
    const problems: string[] = [];
    let resolved = 0;
    let withRecords = 0;
    for (const n of w.names) {
      const tag = `${n.kind} ${n.network}/${n.name}`;
      const [lib, api] = await Promise.all([libraryAnswer(n), apiAnswer(w, n)]);
      if (lib.owner !== null) resolved++;
      if (Object.keys(lib.records).length > 0) withRecords++;
      problems.push(...differences(tag, lib, api, "library"));
    }
    expect(problems, problems.join("\n")).toEqual([]);
    // The judge did resolve: every live UNS fixture name and live CNS name has an owner, and all
    // but the CNS name whose transfer dropped its resolver have records.
    const live = fixtureWorld().domains.filter(
      (d) => d.provider === "NAMESPACE_B" && (d.expiresAt === null || d.expiresAt > Date.now()),
    ).length;
    const liveCns = CNS_NAMES.filter((c) => cnsFinal(c) !== null).length;
    expect(resolved).toBe(live + liveCns);
    expect(withRecords).toBeGreaterThanOrEqual(live + liveCns - 1);
  }, 300_000);

  it("agrees on the addresses per coin (addr, multiChainAddr)", async () => {
    const problems: string[] = [];
    const coins: Array<[string, string | null, string]> = [
      ["ETH", null, "token.ETH.0"],
      ["BTC", null, "token.BTC.0"],
      ["USDT", "ERC20", "token.USDT.ERC20.0"],
    ];
    let agreed = 0;
    for (const n of w.names.filter((x) => x.kind !== "burned")) {
      const api = await apiAnswer(w, n);
      if (api.owner === null) continue;
      const r = clientFor(n);
      for (const [ticker, chain, key] of coins) {
        let lib: string | undefined;
        try {
          lib =
            chain === null ? await r.addr(n.ascii, ticker) : await r.multiChainAddr(n.ascii, ticker, chain);
        } catch (e) {
          if (!(e instanceof ResolutionError)) throw e;
          const missing = [ResolutionErrorCode.RecordNotFound, ResolutionErrorCode.UnspecifiedResolver];
          if (!missing.includes(e.code)) throw e;
        }
        const mine = api.records[key];
        const libValue = lib === undefined ? undefined : ticker === "ETH" || chain ? lib.toLowerCase() : lib;
        if (mine !== undefined) agreed++;
        if (libValue !== mine)
          problems.push(`${n.network}/${n.name} ${ticker}: library ${libValue}, API ${mine}`);
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    // Every live name has an ETH address; some have BTC and USDT.
    expect(agreed).toBeGreaterThan(90);
  }, 300_000);

  it("agrees on every owner's reverse (primary) name on each chain", async () => {
    const problems: string[] = [];
    const uns = new Uns({ locations: { Layer1: layers.ETHEREUM, Layer2: layers.POLYGON } });
    const r = client(layers.ETHEREUM, layers.POLYGON);
    const byToken = new Map<string, JudgedName>();
    for (const n of w.names) byToken.set(`${n.network}/${BigInt(r.namehash(n.ascii, "UNS" as never))}`, n);
    let seen = 0;
    for (const address of w.addresses) {
      for (const [network, location] of [
        ["ETHEREUM", "UNSLayer1"],
        ["POLYGON", "UNSLayer2"],
      ] as const) {
        const token = await uns.reverseOf(address, location);
        const lib = token ? (byToken.get(`${network}/${token}`)?.name ?? `token ${token}`) : null;
        const res = await w.api(
          `reverse-resolve?walletAddress=${address}&network=${network}&provider=NAMESPACE_B`,
        );
        const first = Array.isArray(res.body.data) ? res.body.data[0]?.domain : undefined;
        const stored = await w.store.domainMap.findReverse(address, { network, provider: "NAMESPACE_B" });
        if (lib !== null) {
          seen++;
          if (first !== lib)
            problems.push(`${network} ${address}: library reverse ${lib}, API first ${first}`);
        } else if (stored.length > 0) {
          problems.push(`${network} ${address}: library has no reverse, omniname has ${stored.length}`);
        }
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    const expected = fixtureWorld().domains.filter(
      (d) => d.provider === "NAMESPACE_B" && d.reverse && (d.expiresAt === null || d.expiresAt > Date.now()),
    ).length;
    expect(seen).toBe(expected);
  }, 300_000);

  // Last: it changes the chain behind the index's back.
  it("notices a record written on chain that the index has not crawled (the judge can fail)", async () => {
    const n = w.names.find((x) => x.name === "bob.x" && x.network === "ETHEREUM")!;
    const owner = (await apiAnswer(w, n)).owner!;
    const net = w.devnet.manifest.networks.ETHEREUM!;
    const sender = await senderFor(net.rpcUrl);
    await sender.send([
      {
        from: owner as `0x${string}`,
        to: net.contracts.NAMESPACE_B!.addresses.registry as `0x${string}`,
        data: unsCall("UNSRegistry", "set", [
          "browser.redirect_url",
          "https://changed.example.com",
          namehashId(n.ascii),
        ]),
      },
    ]);
    await sender.mine();
    const diff = differences(n.name, await libraryAnswer(n), await apiAnswer(w, n), "library");
    expect(diff).toEqual([
      'bob.x: redirect.WEBSITE.0 library "https://changed.example.com", API "https://bob.example.com"',
    ]);
  }, 60_000);
});

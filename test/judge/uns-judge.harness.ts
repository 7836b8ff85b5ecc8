import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import pino from "pino";
import { type Abi, createPublicClient, type Hex, http, type PublicClient } from "viem";
import { realAbi } from "../../src/devnet/real-artifacts.js";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { fixtureWorld } from "../../src/devnet/fixtures.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { EXPIRABLE_TLDS, UNS_TLDS } from "../../src/devnet/real-uns.js";
import { CNS_NAMES, UNS_BURNED, UNS_BURNED_OWNER, unsAsciiName } from "../../src/devnet/seed-uns.js";
import type { Network } from "../../src/domain/networks.js";
import { adapterFor } from "../../src/providers/adapters.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { crawlToHead, tempStore } from "../crawler/crawler-harness.js";

/**
 * The shared setup of the UNS judges (test/judge/uns-*.test.ts): a fresh devnet (ETHEREUM and
 * POLYGON: the UNS chains) seeded with the fixture world, the legacy CNS names and the burned
 * names, crawled into a temporary store, and omniname's API in process over that store.
 */

/** One UNS or CNS name the devnet seeded, with what the seed says it ends as (null owner: none). */
export interface JudgedName {
  network: "ETHEREUM" | "POLYGON";
  /** As the API is asked (normalized Unicode). */
  name: string;
  /** As it is on chain (punycode ASCII). */
  ascii: string;
  kind: "uns" | "cns" | "burned";
  /** Native keys whose values the judge reads (the seeded ones, wiped ones included). */
  nativeKeys: string[];
}

export interface UnsJudgeWorld {
  devnet: Devnet;
  store: Store;
  names: JudgedName[];
  /** Every address that owned or owns a judged name. */
  addresses: string[];
  /** GET an API v1 path (with the key); returns status and parsed body. */
  api(path: string): Promise<{ status: number; body: ApiBody }>;
  close(): Promise<void>;
}

export interface ApiRecord {
  domain: string;
  network: string;
  provider: string;
  ownerAddress: string;
  records: Record<string, string>;
  info: { smartContractAddress?: string; tags?: string[] };
}
export interface ApiBody {
  result?: boolean;
  data?: ApiRecord | ApiRecord[];
}

const require = createRequire(import.meta.url);

/** The standard keys the resolution library knows (its `allRecords`), besides the seeded ones. */
export function libraryKeys(): string[] {
  const keys = require("@unstoppabledomains/resolution/build/config/resolver-keys.json") as {
    keys: Record<string, unknown>;
  };
  return Object.keys(keys.keys);
}

/**
 * The library asks api.unstoppabledomains.com which naming service sells a TLD (`Tlds`, cached in
 * static fields) before resolving: no network here, so the judge gives it the devnet's TLDs.
 */
export function offlineTlds(): void {
  const Tlds = (
    require("@unstoppabledomains/resolution/build/utils/Tlds") as { default: Record<string, unknown> }
  ).default;
  const tlds = [...UNS_TLDS, ...EXPIRABLE_TLDS];
  Tlds.supportedTlds = [...tlds, "eth"];
  Tlds.tldsMeta = Object.fromEntries([
    ...tlds.map((t) => [t, { namingService: "UNS", registrationBlockchain: "ETH" }]),
    ["eth", { namingService: "ENS", registrationBlockchain: "ETH" }],
  ]);
}

export async function startUnsJudgeWorld(): Promise<UnsJudgeWorld> {
  const t = await tempStore();
  const devnet = await startDevnet({
    dataDir: t.dir,
    persist: false,
    blockTime: 0,
    logs: false,
    networks: ["ETHEREUM", "POLYGON"],
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
  try {
    await crawlToHead(t.store, sourcesFromManifest(devnet.manifest));
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store: t.store,
      ranker: createScoringRanker(),
      pepper: randomBytes(16).toString("hex"),
      // The chains' clock is the wall clock once seeded.
      clock: () => Date.now(),
    };
    const project = await t.store.projects.createProject({ name: "uns-judge", plan: "internal" });
    const { key } = await createApiKey(t.store, ctx.pepper, project.id, "k");
    const app = await buildApp(ctx, { services: createConsoleServices(ctx), closeServices: true });

    const names: JudgedName[] = [];
    const addresses = new Set<string>();
    for (const d of fixtureWorld().domains) {
      if (d.provider !== "NAMESPACE_B") continue;
      const keys = [...d.records, ...(d.history?.resetRecordsBefore ?? [])].map(([k]) => k);
      names.push({
        network: d.network as JudgedName["network"],
        name: d.name,
        ascii: unsAsciiName(d.name),
        kind: "uns",
        nativeKeys: [...new Set(keys)],
      });
      for (const o of [...(d.history?.previousOwners ?? []), d.owner]) addresses.add(o);
    }
    for (const c of CNS_NAMES) {
      const keys = [...c.records, ...(c.update ? [c.update] : []), ...(c.reconfigured ?? [])].map(([k]) => k);
      names.push({
        network: "ETHEREUM",
        name: c.name,
        ascii: c.name,
        kind: "cns",
        nativeKeys: [...new Set(keys)],
      });
      addresses.add(c.owner);
      if (c.newOwner) addresses.add(c.newOwner);
    }
    for (const [network, name] of Object.entries(UNS_BURNED) as Array<[Network, string]>) {
      names.push({
        network: network as JudgedName["network"],
        name,
        ascii: name,
        kind: "burned",
        nativeKeys: ["crypto.ETH.address", "browser.redirect_url"],
      });
    }
    addresses.add(UNS_BURNED_OWNER);

    return {
      devnet,
      store: t.store,
      names,
      addresses: [...addresses],
      async api(path) {
        const res = await app.inject({ url: `/svc/api/v1/${path}`, headers: { "api-key": key } });
        return { status: res.statusCode, body: res.json() as ApiBody };
      },
      async close() {
        await app.close();
        await devnet.stop();
        await t.cleanup();
      },
    };
  } catch (e) {
    await devnet.stop();
    await t.cleanup();
    throw e;
  }
}

/** What one side (the library, eth_call, or the API) says about one name. */
export interface Answer {
  /** null: no owner (unregistered, burned, expired). */
  owner: string | null;
  /** Canonical keys (omniname's mapping applied to native values, for the chain sides). */
  records: Record<string, string>;
  /** Registry holding the name (UNSRegistry or CNSRegistry), lower case. */
  registry?: string | null;
}

/** Canonical records of native values, mapped as omniname maps them (empty values dropped). */
export function canonical(natives: Record<string, string>): Record<string, string> {
  const adapter = adapterFor("NAMESPACE_B")!;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(natives)) {
    if (v === "") continue;
    for (const m of adapter.mapRecord(k, v)) out[m.key] = m.value;
  }
  return out;
}

/** The API's answer for a name on its network (404 = no owner). */
export async function apiAnswer(w: UnsJudgeWorld, n: JudgedName): Promise<Answer> {
  const r = await w.api(
    `resolve?domain=${encodeURIComponent(n.name)}&network=${n.network}&provider=NAMESPACE_B`,
  );
  if (r.status === 404) return { owner: null, records: {}, registry: null };
  if (r.status !== 200) throw new Error(`${n.name}: API HTTP ${r.status}`);
  const d = r.body.data as ApiRecord;
  return {
    owner: d.ownerAddress.toLowerCase(),
    records: d.records,
    registry: d.info.smartContractAddress?.toLowerCase() ?? null,
  };
}

/** Every difference between two answers of one name, one line each. */
export function differences(tag: string, judge: Answer, api: Answer, judgeName: string): string[] {
  const out: string[] = [];
  if (judge.owner !== api.owner) out.push(`${tag}: owner ${judgeName} ${judge.owner}, API ${api.owner}`);
  if (judge.owner === null && api.owner === null) return out;
  if (judge.registry !== undefined && judge.registry !== api.registry)
    out.push(`${tag}: registry ${judgeName} ${judge.registry}, API ${api.registry}`);
  for (const k of new Set([...Object.keys(judge.records), ...Object.keys(api.records)])) {
    if (judge.records[k] !== api.records[k]) {
      out.push(
        `${tag}: ${k} ${judgeName} ${JSON.stringify(judge.records[k])}, API ${JSON.stringify(api.records[k])}`,
      );
    }
  }
  return out;
}

export const ZERO = "0x0000000000000000000000000000000000000000";
export const isZero = (a: string | null | undefined) => !a || /^0x0{40}$/i.test(a);
export type { Hex };

/** A view function of a real UNS/CNS contract on a judged chain, at its latest block or at `block`. */
export type ContractRead = <T>(
  network: JudgedName["network"],
  contract: string,
  address: string,
  fn: string,
  args: unknown[],
  block?: number,
) => Promise<T>;

/** eth_call on the world's chains (one batching client per chain). */
export function contractReader(w: () => UnsJudgeWorld): ContractRead {
  const clients = new Map<string, PublicClient>();
  const read: ContractRead = async (network, contract, address, fn, args, block) => {
    const url = w().devnet.manifest.networks[network]!.rpcUrl;
    let c = clients.get(url);
    if (!c) {
      c = createPublicClient({ transport: http(url, { batch: { batchSize: 50 } }) }) as PublicClient;
      clients.set(url, c);
    }
    return (await c.readContract({
      abi: realAbi(contract) as Abi,
      address: address as Hex,
      functionName: fn,
      args,
      ...(block === undefined ? {} : { blockNumber: BigInt(block) }),
    })) as never;
  };
  return read;
}

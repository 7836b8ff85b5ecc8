import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { createPublicClient, http, type PublicClient } from "viem";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import { buildApp } from "../../src/api/app.js";
import type { AppContext } from "../../src/app-context.js";
import { loadConfig } from "../../src/config/load-config.js";
import { type Devnet, startDevnet } from "../../src/devnet/devnet.js";
import { type FixtureDomain, fixtureWorld } from "../../src/devnet/fixtures.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import type { RealEnsAddresses } from "../../src/devnet/real-ens.js";
import { type RealEnsChoice, realEnsChoices } from "../../src/devnet/seed-ens-real.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import type { Store } from "../../src/store/store.js";
import { crawlToHead, tempStore } from "../crawler/crawler-harness.js";

/** One API record as the v1 endpoints return it. */
export interface ApiRecord {
  domain: string;
  network: string;
  provider: string;
  ownerAddress: string;
  records: Record<string, string>;
  info: { tags: string[] };
}

export interface EnsJudgeWorld {
  devnet: Devnet;
  store: Store;
  rpcUrl: string;
  client: PublicClient;
  ens: RealEnsAddresses;
  /** Every seeded ENS name, with how it was written on chain. */
  names: Array<{ d: FixtureDomain; choice: RealEnsChoice }>;
  /** GET on the v1 API as a project that serves expired names too (tagged `expired`). */
  get(path: string): Promise<{ status: number; body: { data: unknown } }>;
  /** The same as a project with the default rules (expired names not served). */
  getDefault(path: string): Promise<{ status: number; body: { data: unknown } }>;
  /** Crawls what the chain gained since (the crawler resumes from its checkpoints). */
  crawl(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the ETHEREUM devnet chain (the real ENS contracts, the fixture world), crawls it to its
 * head into a temporary SQLite store, and builds the API in process over that store. The API's
 * clock is the wall clock (which the seeded chain's last block is at) unless `clock` is given.
 */
export async function startEnsJudgeWorld(options: { clock?: () => number } = {}): Promise<EnsJudgeWorld> {
  const t = await tempStore();
  const devnet = await startDevnet({
    dataDir: t.dir,
    persist: false,
    blockTime: 0,
    logs: false,
    networks: ["ETHEREUM"],
    basePort: 20_000 + Math.floor(Math.random() * 20_000),
  });
  let app: FastifyInstance | null = null;
  try {
    const sources = sourcesFromManifest(devnet.manifest);
    await crawlToHead(t.store, sources);
    const ctx: AppContext = {
      config: loadConfig({}, { dataDir: "." }),
      logger: pino({ level: "silent" }),
      store: t.store,
      ranker: createScoringRanker(),
      pepper: randomBytes(16).toString("hex"),
      clock: options.clock ?? (() => Date.now()),
    };
    const withExpired = await t.store.projects.createProject({ name: "judge-expired", plan: "internal" });
    await t.store.projects.updateProjectSettings(withExpired.id, { includeExpired: true });
    const plain = await t.store.projects.createProject({ name: "judge-default", plan: "internal" });
    const keyExpired = (await createApiKey(t.store, ctx.pepper, withExpired.id, "k")).key;
    const keyDefault = (await createApiKey(t.store, ctx.pepper, plain.id, "k")).key;
    const built = await buildApp(ctx, { services: createConsoleServices(ctx), closeServices: true });
    app = built;
    const inject = (key: string) => async (path: string) => {
      const res = await built.inject({ url: `/svc/api/v1/${path}`, headers: { "api-key": key } });
      return { status: res.statusCode, body: res.json() as { data: unknown } };
    };
    const net = devnet.manifest.networks.ETHEREUM!;
    const ethereum = fixtureWorld().domains.filter((d) => d.network === "ETHEREUM");
    const choices = realEnsChoices(ethereum);
    return {
      devnet,
      store: t.store,
      rpcUrl: net.rpcUrl,
      client: createPublicClient({
        transport: http(net.rpcUrl, { batch: { batchSize: 100 } }),
      }) as PublicClient,
      ens: net.contracts.NAMESPACE_C!.addresses as unknown as RealEnsAddresses,
      names: ethereum
        .filter((d) => d.provider === "NAMESPACE_C")
        .map((d) => ({ d, choice: choices.get(d.name)! })),
      get: inject(keyExpired),
      getDefault: inject(keyDefault),
      async crawl() {
        await crawlToHead(t.store, sources);
      },
      async close() {
        await built.close();
        await devnet.stop();
        await t.cleanup();
      },
    };
  } catch (e) {
    await app?.close();
    await devnet.stop();
    await t.cleanup();
    throw e;
  }
}

export function resolvePath(name: string): string {
  return `resolve?domain=${encodeURIComponent(name)}&network=ETHEREUM&provider=NAMESPACE_C`;
}

export function reversePath(address: string): string {
  return `reverse-resolve?walletAddress=${address}&network=ETHEREUM&provider=NAMESPACE_C`;
}

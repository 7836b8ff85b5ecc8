import { Redis } from "ioredis";
import type { Logger } from "pino";
import { Counter, Histogram, type Registry } from "prom-client";
import type { Config } from "../config/config.schema.js";
import type { DevnetManifest } from "../devnet/manifest.js";
import { createEnsLive, type EnsLive, mapOnlyEnsLive } from "../resolution/ens-live.js";
import {
  type LiveAnswerCache,
  layeredLiveCache,
  memoryLiveCache,
  redisLiveCache,
  storeLiveCache,
} from "../resolution/ens-live-cache.js";
import type { Store } from "../store/store.js";

/**
 * The live ENS lookups of an API process (docs/ens-offchain.md): on the ETHEREUM RPC of the
 * configuration, or on the embedded devnet's chain (whose PublicResolvers are storage resolvers
 * too, and whose gateway is on loopback). None without an ETHEREUM chain; with ENS_LIVE_LOOKUP off,
 * names under other resolvers answer from the index alone, tagged offchain-not-resolved. The
 * answers are shared by the API processes through Redis (REDIS_URL), else on PostgreSQL through
 * the store (`store`), each process keeping what it read too; the embedded SQLite setup keeps them
 * in the process. `close` ends the Redis connection.
 */
export function ensLiveFor(
  config: Config,
  devnet: DevnetManifest | null,
  logger: Logger,
  registry?: Registry,
  store?: Pick<Store, "accounts" | "dialect">,
): EnsLive | undefined {
  const storage = new Set(
    config.ensStorageResolvers
      .split(",")
      .filter((a) => a !== "")
      .map((a) => a.toLowerCase()),
  );
  let rpcUrl = config.rpcUrlEthereum;
  let allowLoopback = config.ensGatewayAllowLoopback;
  const chain = devnet?.networks.ETHEREUM;
  if (rpcUrl === undefined && chain !== undefined) {
    rpcUrl = chain.rpcUrl;
    // The embedded devnet, and only it, reaches its own gateway on loopback.
    allowLoopback = true;
    const ens = chain.contracts.NAMESPACE_C?.addresses ?? {};
    for (const role of ["resolver", "oldResolver"]) {
      const a = (ens as Record<string, string | undefined>)[role];
      if (a) storage.add(a.toLowerCase());
    }
  }
  if (rpcUrl === undefined) return undefined;
  // Off: the names are still told apart (tagged offchain-not-resolved), never looked up.
  if (!config.ensLiveLookup) return mapOnlyEnsLive(storage);
  logger.info(
    { storageResolvers: storage.size, timeoutMs: config.ensLiveTimeoutMs, cacheMs: config.ensLiveCacheMs },
    "ENS names under other resolvers are looked up live (wildcard, CCIP-Read)",
  );
  const registers = registry ? [registry] : [];
  const lookups = new Counter({
    name: "omniname_ens_live_lookups_total",
    help: "Live lookups of ENS names not answered by the index (wildcard, CCIP-Read), by outcome: ok, cached, failed",
    labelNames: ["outcome"] as const,
    registers,
  });
  const seconds = new Histogram({
    name: "omniname_ens_live_lookup_seconds",
    help: "Time of a live ENS lookup that was not in the cache (every record, every gateway round trip), by outcome",
    labelNames: ["outcome"] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8],
    registers,
  });
  for (const outcome of ["ok", "cached", "failed"]) lookups.inc({ outcome }, 0);
  let cache: LiveAnswerCache = memoryLiveCache();
  let redis: Redis | null = null;
  if (config.redisUrl) {
    // No offline queue: while Redis is down a read is a miss at once (the gateway is asked),
    // never a request waiting for a reconnect.
    redis = new Redis(config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 50, 500),
    });
    let down = false;
    redis.on("error", (e) => {
      if (down) return;
      down = true;
      logger.warn({ err: e }, "redis error (live ENS answers are cached per process until it returns)");
    });
    redis.on("ready", () => {
      down = false;
    });
    cache = layeredLiveCache(cache, redisLiveCache(redis, config.redisKeyPrefix));
  } else if (store?.dialect === "postgres") {
    // PostgreSQL without Redis: the answers shared through the store (ens_live_answers).
    cache = layeredLiveCache(cache, storeLiveCache(store.accounts));
  }
  const connection = redis;
  return createEnsLive({
    cache,
    close: async () => {
      await connection?.quit().catch(() => connection.disconnect());
    },
    observe: (outcome, ms) => {
      lookups.inc({ outcome });
      if (outcome !== "cached") seconds.observe({ outcome }, ms / 1000);
    },
    rpcUrl,
    storageResolvers: storage,
    policy: { allowLoopback },
    timeoutMs: config.ensLiveTimeoutMs,
    cacheMs: config.ensLiveCacheMs,
  });
}

import { Type } from "@sinclair/typebox";

/**
 * The crawler's settings (docs/crawler.md): RPC and WebSocket URLs per network, finality windows,
 * ranges, timeouts, leases. Spread into ConfigSchema (config.schema.ts) in this place of its order,
 * which is the README's configuration table's; kept apart so that config.schema.ts stays short.
 */
export const CRAWLER_SETTINGS = {
  rpcUrlEthereum: Type.Optional(
    Type.String({
      pattern: "^https?://",
      env: "RPC_URL_ETHEREUM",
      description: "JSON-RPC of Ethereum mainnet: crawls ENS and UNS there",
      secret: true,
    }),
  ),
  rpcUrlPolygon: Type.Optional(
    Type.String({
      pattern: "^https?://",
      env: "RPC_URL_POLYGON",
      description: "JSON-RPC of Polygon: crawls UNS and FNS there",
      secret: true,
    }),
  ),
  rpcUrlBsc: Type.Optional(
    Type.String({
      pattern: "^https?://",
      env: "RPC_URL_BSC",
      description: "JSON-RPC of BSC: crawls FNS there",
      secret: true,
    }),
  ),
  rpcUrlAurora: Type.Optional(
    Type.String({
      pattern: "^https?://",
      env: "RPC_URL_AURORA",
      description: "JSON-RPC of Aurora: crawls FNS there",
      secret: true,
    }),
  ),
  rpcWsUrlEthereum: Type.Optional(
    Type.String({
      pattern: "^wss?://",
      env: "RPC_WS_URL_ETHEREUM",
      description:
        "WebSocket JSON-RPC of Ethereum for newHeads; default: RPC_URL_ETHEREUM with ws:// (wss://)",
      secret: true,
    }),
  ),
  rpcWsUrlPolygon: Type.Optional(
    Type.String({
      pattern: "^wss?://",
      env: "RPC_WS_URL_POLYGON",
      description: "WebSocket JSON-RPC of Polygon for newHeads; default: RPC_URL_POLYGON with ws:// (wss://)",
      secret: true,
    }),
  ),
  rpcWsUrlBsc: Type.Optional(
    Type.String({
      pattern: "^wss?://",
      env: "RPC_WS_URL_BSC",
      description: "WebSocket JSON-RPC of BSC for newHeads; default: RPC_URL_BSC with ws:// (wss://)",
      secret: true,
    }),
  ),
  rpcWsUrlAurora: Type.Optional(
    Type.String({
      pattern: "^wss?://",
      env: "RPC_WS_URL_AURORA",
      description: "WebSocket JSON-RPC of Aurora for newHeads; default: RPC_URL_AURORA with ws:// (wss://)",
      secret: true,
    }),
  ),
  rpcUrlSolana: Type.Optional(
    Type.String({
      pattern: "^https?://",
      env: "RPC_URL_SOLANA",
      description:
        "JSON-RPC of Solana: indexes the Solana Name Service there (getProgramAccounts must be enabled; docs/sns.md)",
      secret: true,
    }),
  ),
  rpcWsUrlSolana: Type.Optional(
    Type.String({
      pattern: "^wss?://",
      env: "RPC_WS_URL_SOLANA",
      description:
        "WebSocket JSON-RPC of Solana for programSubscribe; default: RPC_URL_SOLANA with ws:// (wss://)",
      secret: true,
    }),
  ),
  crawlerNewHeads: Type.Boolean({
    default: true,
    env: "CRAWLER_NEW_HEADS",
    description:
      'A caught-up source wakes on eth_subscribe("newHeads") over the RPC\'s WebSocket; polling stays the fallback. false: poll only',
  }),
  finalityEthereum: Type.Integer({
    minimum: 1,
    default: 65,
    env: "FINALITY_ETHEREUM",
    description: "Ethereum finality window (blocks); a deeper reorg halts the source",
  }),
  finalityPolygon: Type.Integer({
    minimum: 1,
    default: 200,
    env: "FINALITY_POLYGON",
    description: "Polygon finality window (blocks)",
  }),
  finalityBsc: Type.Integer({
    minimum: 1,
    default: 30,
    env: "FINALITY_BSC",
    description: "BSC finality window (blocks)",
  }),
  finalityAurora: Type.Integer({
    minimum: 1,
    default: 30,
    env: "FINALITY_AURORA",
    description: "Aurora finality window (blocks)",
  }),
  crawlerPollIntervalMs: Type.Integer({
    minimum: 50,
    maximum: 600_000,
    default: 1_000,
    env: "CRAWLER_POLL_INTERVAL_MS",
    description: "How often a caught-up source polls the chain head",
  }),
  crawlerMaxRange: Type.Integer({
    minimum: 1,
    maximum: 10_000_000,
    default: 100_000,
    env: "CRAWLER_MAX_RANGE",
    description: "Largest eth_getLogs block range (ranges adapt below it)",
  }),
  crawlerInitialRange: Type.Integer({
    minimum: 1,
    maximum: 10_000_000,
    default: 2_000,
    env: "CRAWLER_INITIAL_RANGE",
    description: "First eth_getLogs block range of a source",
  }),
  crawlerRpcTimeoutMs: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 30_000,
    env: "CRAWLER_RPC_TIMEOUT_MS",
    description: "Per-request JSON-RPC timeout",
  }),
  instanceId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: "^[\\x21-\\x7e]+$",
      env: "INSTANCE_ID",
      description: "This process's name in the crawler's source leases and /status; default hostname:pid",
    }),
  ),
  crawlerLeaseTtlMs: Type.Integer({
    minimum: 500,
    maximum: 600_000,
    default: 3_000,
    env: "CRAWLER_LEASE_TTL_MS",
    description:
      "A source's writer lease expires this long after its last renewal; a standby then takes over",
  }),
  crawlerLeaseRenewMs: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 1_000,
    env: "CRAWLER_LEASE_RENEW_MS",
    description: "How often the writer renews its source leases and standbys try to take them",
  }),
};

import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The crawler's Prometheus metrics, on a registry passed in (the one GET /metrics serves) so that
 * several crawlers in one test process never collide in a global registry.
 */
export function createCrawlerMetrics(registry: Registry = new Registry()) {
  const labelNames = ["source"] as const;
  return {
    registry,
    head: new Gauge({
      name: "omniname_crawler_head_block",
      help: "Chain head seen by the source",
      labelNames,
      registers: [registry],
    }),
    checkpoint: new Gauge({
      name: "omniname_crawler_checkpoint_block",
      help: "Last block applied by the source",
      labelNames,
      registers: [registry],
    }),
    lag: new Gauge({
      name: "omniname_crawler_lag_blocks",
      help: "Blocks between head and checkpoint",
      labelNames,
      registers: [registry],
    }),
    halted: new Gauge({
      name: "omniname_crawler_halted",
      help: "1 when the source stopped on an unrecoverable error (deep reorg)",
      labelNames,
      registers: [registry],
    }),
    rangeSize: new Gauge({
      name: "omniname_crawler_range_blocks",
      help: "Current eth_getLogs range size",
      labelNames,
      registers: [registry],
    }),
    events: new Counter({
      name: "omniname_crawler_events_total",
      help: "Logs applied",
      labelNames,
      registers: [registry],
    }),
    badData: new Counter({
      name: "omniname_crawler_bad_data_total",
      help: "Logs or values skipped or made safe (bad chain data)",
      labelNames: ["source", "reason"] as const,
      registers: [registry],
    }),
    reorgs: new Counter({
      name: "omniname_crawler_reorgs_total",
      help: "Reorgs rolled back",
      labelNames,
      registers: [registry],
    }),
    rpcRequests: new Counter({
      name: "omniname_crawler_rpc_requests_total",
      help: "JSON-RPC HTTP requests by outcome",
      labelNames: ["source", "outcome"] as const,
      registers: [registry],
    }),
    rpcRetries: new Counter({
      name: "omniname_crawler_rpc_retries_total",
      help: "JSON-RPC retries by fault",
      labelNames: ["source", "fault"] as const,
      registers: [registry],
    }),
    applySeconds: new Histogram({
      name: "omniname_crawler_apply_seconds",
      help: "Time to write one range (journal, projection, checkpoint)",
      labelNames,
      buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

export type CrawlerMetrics = ReturnType<typeof createCrawlerMetrics>;

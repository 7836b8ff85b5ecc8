import type { Logger } from "pino";
import { ChainReader } from "./chain-reader.js";
import type { CrawlerSource } from "./crawler-source.js";
import type { CrawlerMetrics } from "./crawler-metrics.js";
import { createRpcClient } from "./rpc-client.js";

/**
 * The RPC wiring of one source: the fault-tolerant client on the source's URL, its retries
 * counted and logged, every request cut short by `signal` (the source's stop).
 *
 * @example const reader = createSourceReader(source, { signal, timeoutMs: 20_000 }, logger, metrics);
 */
export function createSourceReader(
  source: CrawlerSource,
  options: { signal: AbortSignal; timeoutMs: number; backoffMs: number },
  logger: Logger,
  metrics?: CrawlerMetrics,
): ChainReader {
  const labels = { source: source.id };
  const rpc = createRpcClient({
    url: source.rpcUrl,
    signal: options.signal,
    timeoutMs: options.timeoutMs,
    baseBackoffMs: options.backoffMs,
    onRetry: (r) => {
      metrics?.rpcRetries.inc({ ...labels, fault: r.fault });
      logger.debug({ source: source.id, ...r }, "rpc retry");
    },
    onRequest: (r) => metrics?.rpcRequests.inc({ ...labels, outcome: r.outcome }),
  });
  return new ChainReader(rpc, source.chainId);
}

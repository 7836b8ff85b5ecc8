import type { Logger } from "pino";
import type { RuntimeContext } from "../context.js";
import type { CrawlerStore, SignalsFn } from "../crawler/crawler-source.js";
import { wsUrlOf } from "../crawler/new-heads.js";
import { createSnsSync, type SnsSync } from "../crawler/sns-sync.js";
import { LeasedSource, type LeaseOptions } from "../crawler/source-lease.js";
import type { SourceStatus } from "../crawler/source-progress.js";
import { createSource } from "../crawler/sources.js";
import { SNS_MAINNET } from "../providers/sns/sns.adapter.js";
import { WinnerDeriver } from "../workers/winner-deriver.js";

/**
 * The Solana Name Service source of RPC_URL_SOLANA, else of the devnet's Solana (`devnet`, from
 * devnet.json) (docs/sns.md), beside the EVM crawler: passes over the SNS accounts, woken by
 * programSubscribe over RPC_WS_URL_SOLANA (default: the devnet's WebSocket, else the RPC URL with
 * ws://) or every CRAWLER_POLL_INTERVAL_MS, under the source's lease like every EVM source (one
 * writer across crawler processes; a standby takes over when the writer's lease expires); one pass
 * only with `once` (crawl --exit-when-synced, without a lease). Null when there is neither.
 */
export function startSnsSource(
  ctx: Pick<RuntimeContext, "config" | "store" | "ranker" | "clock">,
  log: Logger,
  signals: SignalsFn,
  once: boolean,
  devnet: { rpcUrl: string; wsUrl: string } | null,
  lease: LeaseOptions,
): { status(): SourceStatus; stop(): void; running: Promise<void> } | null {
  const url = ctx.config.rpcUrlSolana ?? devnet?.rpcUrl;
  if (!url) return null;
  const source = createSource("NAMESPACE_D", "SOLANA", SNS_MAINNET.SOLANA, url);
  // Never started: its ranking alone, over a settling transaction (winnersOf, docs/sns.md).
  const winners = new WinnerDeriver({ store: ctx.store, ranker: ctx.ranker, logger: log, clock: ctx.clock });
  const syncOn = (store: CrawlerStore): SnsSync =>
    createSnsSync({
      source,
      store,
      signals,
      log,
      pollIntervalMs: ctx.config.crawlerPollIntervalMs,
      wsUrl: ctx.config.crawlerNewHeads
        ? (ctx.config.rpcWsUrlSolana ??
          (ctx.config.rpcUrlSolana ? wsUrlOf(url) : devnet?.wsUrl) ??
          wsUrlOf(url))
        : null,
      winnersOf: (tx, announced) => winners.derive(announced, tx),
    });
  if (once) {
    const sync = syncOn(ctx.store);
    const running = sync.scanOnce().then(
      () => undefined,
      (e) => log.error({ err: e, source: source.id }, "SNS pass failed"),
    );
    return { status: () => sync.status(), stop: () => sync.stop(), running };
  }
  const leased = new LeasedSource(
    source.id,
    ctx.store,
    (store) => {
      const sync = syncOn(store);
      return {
        run: async () => {
          await sync.run();
          return sync.status().state;
        },
        stop: () => sync.stop(),
        status: () => sync.status(),
      };
    },
    lease,
    log,
  );
  const running = leased.run().then(() => undefined);
  return { status: () => leased.status(), stop: () => leased.stop(), running };
}

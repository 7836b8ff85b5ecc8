import pino from "pino";
import type { CrawlerSource, SignalsFn } from "../../src/crawler/crawler-source.js";
import { createSnsSync, type SnsScanStats, type SnsSync } from "../../src/crawler/sns-sync.js";
import { createSource } from "../../src/crawler/sources.js";
import { createSolanaLedger, type SolanaLedger } from "../../src/devnet/solana-ledger.js";
import { type SolanaRpc, startSolanaRpc } from "../../src/devnet/solana-rpc.js";
import { SNS_WALLETS, seedSnsWorld } from "../../src/devnet/sns-fixtures.js";
import { createSnsWriter, type SnsWriter } from "../../src/devnet/sns-writer.js";
import { SNS_MAINNET } from "../../src/providers/sns/sns.adapter.js";
import type { CrawlerStore } from "../../src/crawler/crawler-source.js";
import type { Store } from "../../src/store/store.js";

/** Signals that neither raise nor lower a name: the tests compare answers, not scores. */
export const NEUTRAL_SNS_SIGNALS: SignalsFn = () => ({
  baseScore: 50,
  spam: false,
  csamOk: true,
  kyc: false,
  tags: [],
});

export interface SnsEndpoint {
  ledger: SolanaLedger;
  /** Writes the SNS programs' accounts (registration, transfer, records, …) into the ledger. */
  writer: SnsWriter;
  /** The devnet's Solana JSON-RPC and WebSocket endpoint over the ledger, on 127.0.0.1. */
  rpc: SolanaRpc;
  /** The SNS source (NAMESPACE_D on SOLANA) pointed at the endpoint. */
  source: CrawlerSource;
  /** An SNS source over `store` reading this endpoint (the real component: sns-sync.ts). */
  syncFor(store: CrawlerStore, opts?: { signals?: SignalsFn; wsUrl?: string | null }): SnsSync;
  close(): Promise<void>;
}

/**
 * The devnet's Solana endpoint (LiteSVM ledger + our JSON-RPC/WebSocket) seeded with the SNS world
 * of `sns-fixtures.ts` (`hostile: false` leaves out the hostile accounts), and the SNS source that
 * builds a map from it: the shared setup of the SNS judge and the SNS tests of the API, DNS,
 * change feed and snapshots.
 */
export async function startSnsEndpoint(
  opts: { hostile?: boolean; seed?: boolean; finalityLag?: number } = {},
): Promise<SnsEndpoint> {
  const ledger = createSolanaLedger(undefined, { finalityLag: opts.finalityLag ?? 0 });
  const writer = createSnsWriter(ledger);
  const rpc = await startSolanaRpc(ledger);
  if (opts.seed ?? true) seedSnsWorld(writer, { hostile: opts.hostile ?? true });
  const source = { ...createSource("NAMESPACE_D", "SOLANA", SNS_MAINNET.SOLANA, ""), rpcUrl: rpc.url };
  return {
    ledger,
    writer,
    rpc,
    source,
    syncFor: (store, o = {}) =>
      createSnsSync({
        source,
        store,
        signals: o.signals ?? NEUTRAL_SNS_SIGNALS,
        log: pino({ level: "silent" }),
        wsUrl: o.wsUrl ?? null,
      }),
    close: () => rpc.close(),
  };
}

/** One pass of a fresh SNS source over `store`: the map of the endpoint's current accounts. */
export async function snsPass(
  sns: SnsEndpoint,
  store: CrawlerStore,
): Promise<{ sync: SnsSync; stats: SnsScanStats }> {
  const sync = sns.syncFor(store);
  return { sync, stats: await sync.scanOnce() };
}

/**
 * The SNS map of a store, comparable across stores: each name's token id, name, owner and records,
 * and the primary name of every wallet of the SNS world (by name: domain ids are each store's own).
 */
export async function snsMapOf(store: Store): Promise<string[]> {
  const out: string[] = [];
  const names = new Map<number, string>();
  for await (const page of store.domainMap.iterateDomains(500))
    for (const d of page)
      if (d.provider === "NAMESPACE_D") {
        names.set(d.id, d.name);
        out.push(JSON.stringify([d.tokenId, d.name, d.owner, d.records.map((r) => [r.key, r.value])]));
      }
  for (const w of Object.values(SNS_WALLETS))
    out.push(
      JSON.stringify([w, (await store.domainMap.findReverse(w, {})).map((r) => names.get(r.domainId))]),
    );
  return out.sort();
}

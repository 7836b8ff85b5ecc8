import { type Address, createSolanaRpcSubscriptions } from "@solana/kit";
import type { Logger } from "pino";
import { SNS_PROGRAMS } from "../providers/sns/sns-program.js";
import type { RawAccount } from "../providers/sns/sns-state.js";
import type { createNftWatch } from "./sns-nft-watch.js";

/** Subscriptions at `finalized` that together see every change of the name service's accounts. */
export const FINALIZED_PROGRAM_SUBSCRIPTIONS = 2;

export interface ProgramWatchOptions {
  wsUrl: string;
  sourceId: string;
  log: Logger;
  /** Also the name service at `confirmed` (the change feed at `confirmed`). */
  confirmed: boolean;
  /** The NFT watches, on the same WebSocket client. */
  nfts: ReturnType<typeof createNftWatch>;
  /**
   * An account notified at `finalized` in `slot`: a name service account (`placeable`: a pass over
   * the names it touches can read it) or a primary-domain account of the name offers program.
   */
  onFinalized(account: RawAccount, slot: number, placeable: boolean): void;
  /** A name service account notified at `confirmed`. */
  onConfirmed(account: RawAccount): void;
  /** The subscriptions at `finalized` acknowledged by the RPC now (of FINALIZED_PROGRAM_SUBSCRIPTIONS). */
  onLive(live: number): void;
}

/**
 * The SNS source's subscriptions (docs/sns.md): `programSubscribe` of the name service (every
 * account) and of the name offers program (its 33-byte primary-domain accounts) at `finalized`,
 * of the name service at `confirmed` with the confirmed feed, and the NFT watches; returns the
 * unsubscriber. A lost subscription is logged once; the source polls.
 */
export function watchPrograms(o: ProgramWatchOptions): () => void {
  const abort = new AbortController();
  const subs = createSolanaRpcSubscriptions(o.wsUrl);
  o.nfts.attach(subs, abort.signal);
  let live = 0;
  const accountOf = (n: { value: { pubkey: Address; account: { data: [string, string] } } }): RawAccount => ({
    address: n.value.pubkey,
    data: new Uint8Array(Buffer.from(n.value.account.data[0], "base64")),
  });
  const follow = async (program: Address, filters: Array<{ dataSize: bigint }>, placeable: boolean) => {
    const it = await subs
      .programNotifications(program, { commitment: "finalized", encoding: "base64", filters })
      .subscribe({ abortSignal: abort.signal });
    o.onLive(++live);
    try {
      for await (const n of it) o.onFinalized(accountOf(n), Number(n.context.slot), placeable);
    } finally {
      o.onLive(--live);
    }
  };
  const followConfirmed = async () => {
    const it = await subs
      .programNotifications(SNS_PROGRAMS.nameService, { commitment: "confirmed", encoding: "base64" })
      .subscribe({ abortSignal: abort.signal });
    for await (const n of it) o.onConfirmed(accountOf(n));
  };
  Promise.all([
    follow(SNS_PROGRAMS.nameService, [], true),
    follow(SNS_PROGRAMS.nameOffers, [{ dataSize: 33n }], false),
    o.confirmed ? followConfirmed() : undefined,
  ]).catch((e) => {
    if (!abort.signal.aborted) o.log.warn({ err: e, source: o.sourceId }, "SNS subscription lost; polling");
  });
  return () => {
    abort.abort();
    o.nfts.detach();
  };
}

import type { Address, createSolanaRpcSubscriptions } from "@solana/kit";
import type { Logger } from "pino";

/**
 * Tokenized names whose NFT holder's token account the source watches by default (docs/sns.md,
 * "NFT transfers"): one `accountSubscribe` each at `finalized`, and one at `confirmed` with the
 * confirmed feed; 100 to a WebSocket (kit's channel pool).
 */
export const MAX_WATCHED_NFTS = 1000;

export interface NftWatchOptions {
  sourceId: string;
  log: Logger;
  /** At most this many names watched (default MAX_WATCHED_NFTS); the rest wait for the poll. */
  max?: number;
  /** Also at `confirmed` (the change feed at `confirmed`). */
  confirmed: boolean;
  /** An NFT account of `name` changed at `finalized` (in `slot`) or at `confirmed`. */
  onChange(name: Address, commitment: "finalized" | "confirmed", slot: number): void;
}

/**
 * Keeps one `accountSubscribe` on the token account holding each tokenized name's NFT (up to
 * `max`): a transfer of the NFT empties that account (or an authority change rewrites its owner),
 * and the notification tells the source which name to read again; that pass finds the new holder's
 * account, and `follow` moves the watch there. A no-op until `attach` gives it a WebSocket.
 */
export function createNftWatch(o: NftWatchOptions) {
  const max = o.max ?? MAX_WATCHED_NFTS;
  /** The token accounts subscribed to: → their name, their own abort, whether the RPC acknowledged. */
  const watched = new Map<Address, { name: Address; abort: AbortController; live: boolean }>();
  let subscriptions: { client: ReturnType<typeof createSolanaRpcSubscriptions>; signal: AbortSignal } | null =
    null;
  let tokenized: ReadonlyMap<Address, Address> = new Map();
  let warnedLimit = false;

  /** Subscribes to `account` (holding `name`'s NFT) at each commitment the source follows. */
  function subscribe(account: Address, name: Address): void {
    if (subscriptions === null) return;
    const { client, signal } = subscriptions;
    const abort = new AbortController();
    const entry = { name, abort, live: false };
    watched.set(account, entry);
    const both = AbortSignal.any([signal, abort.signal]);
    let acknowledged = 0;
    const follow = async (commitment: "finalized" | "confirmed") => {
      const it = await client
        .accountNotifications(account, { commitment, encoding: "base64" })
        .subscribe({ abortSignal: both });
      if (++acknowledged === (o.confirmed ? 2 : 1)) entry.live = true;
      for await (const n of it) o.onChange(name, commitment, Number(n.context.slot));
    };
    Promise.all([follow("finalized"), o.confirmed ? follow("confirmed") : undefined]).catch((e) => {
      if (both.aborted) return;
      o.log.warn({ err: e, source: o.sourceId, account }, "SNS NFT subscription lost; polling");
      if (watched.get(account) === entry) watched.delete(account);
    });
  }

  /** Brings the subscriptions in step with the tokenized names (name → NFT token account). */
  function sync(): void {
    if (subscriptions === null) return;
    const want = new Map<Address, Address>();
    for (const [name, account] of tokenized) if (want.size < max) want.set(account, name);
    if (tokenized.size > max && !warnedLimit) {
      warnedLimit = true;
      o.log.warn(
        { source: o.sourceId, tokenized: tokenized.size, watched: max },
        "more tokenized SNS names than NFT subscriptions: the rest wait for the poll",
      );
    }
    for (const [account, w] of watched)
      if (want.get(account) !== w.name) {
        w.abort.abort();
        watched.delete(account);
      }
    for (const [account, name] of want) if (!watched.has(account)) subscribe(account, name);
  }

  return {
    /** Watches these tokenized names (name account → the token account holding its NFT); called after every pass. */
    follow(names: ReadonlyMap<Address, Address>): void {
      tokenized = names;
      sync();
    },
    /** Starts watching over a WebSocket client, until `signal` aborts. */
    attach(client: ReturnType<typeof createSolanaRpcSubscriptions>, signal: AbortSignal): void {
      subscriptions = { client, signal };
      sync();
    },
    detach(): void {
      subscriptions = null;
      watched.clear();
    },
    /** The NFT token accounts followed live: subscribed and acknowledged by the RPC. */
    live(): Address[] {
      return [...watched].filter(([, w]) => w.live).map(([account]) => account);
    },
  };
}

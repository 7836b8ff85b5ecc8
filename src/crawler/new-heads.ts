import type { Logger } from "pino";
import { createPublicClient, webSocket } from "viem";
import { redactUrl } from "../config/redact.js";

/**
 * Wakes a caught-up source when its chain announces a new block, over the node's WebSocket
 * (`eth_subscribe("newHeads")`, through viem's WebSocket transport: one socket per URL, shared by
 * the sources of one chain, reconnected when it drops). Polling stays the fallback: `next` also
 * returns after the poll interval, so a node without a WebSocket, a socket that is down or a
 * missed notification costs at most one interval, never a stall.
 */
export interface HeadWatch {
  /**
   * Resolves at the next head announced (at once if one came since the last call), after `maxMs`,
   * or when `signal` aborts.
   */
  next(maxMs: number, signal: AbortSignal): Promise<"head" | "timeout">;
  /** True once a head arrived over the subscription, until the subscription fails. */
  readonly live: boolean;
  close(): void;
}

/** How long after a failed subscription a new one is tried. */
const RESUBSCRIBE_MS = 5_000;

/** The WebSocket URL of an HTTP JSON-RPC URL on the same host and port (anvil, geth, reth…), or null. */
export function wsUrlOf(rpcUrl: string): string | null {
  try {
    const url = new URL(rpcUrl);
    if (url.protocol === "http:") url.protocol = "ws:";
    else if (url.protocol === "https:") url.protocol = "wss:";
    else if (url.protocol !== "ws:" && url.protocol !== "wss:") return null;
    return url.toString();
  } catch {
    return null;
  }
}

export function watchNewHeads(wsUrl: string, log: Logger): HeadWatch {
  let pending = false;
  let live = false;
  let closed = false;
  let warned = false;
  let waiters: Array<() => void> = [];
  let unwatch: (() => void) | null = null;
  let retry: NodeJS.Timeout | null = null;

  const wake = () => {
    pending = true;
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  // viem keeps one socket per URL for the process; its own reconnection prints failures to the
  // console, so it is off: a failed subscription closes the socket and subscribes anew later.
  const transport = webSocket(wsUrl, { retryCount: 0, reconnect: false });
  let client: ReturnType<typeof createPublicClient> | null = null;
  const closeSocket = () => {
    const c = client;
    client = null;
    void c?.transport
      .getRpcClient()
      .then((rpc: { close(): void }) => rpc.close())
      .catch(() => {});
  };
  const subscribe = () => {
    if (closed) return;
    client = createPublicClient({ transport });
    unwatch = client.watchBlockNumber({
      emitOnBegin: false,
      onBlockNumber: () => {
        if (!live) log.info({ url: redactUrl(wsUrl) }, "following new heads over the WebSocket");
        live = true;
        warned = false;
        wake();
      },
      onError: (e) => {
        live = false;
        // Once per outage: polling goes on meanwhile.
        if (!warned) log.info({ url: redactUrl(wsUrl), err: e.message }, "no newHeads subscription; polling");
        warned = true;
        unwatch?.();
        unwatch = null;
        closeSocket();
        if (!closed && retry === null)
          retry = setTimeout(() => {
            retry = null;
            subscribe();
          }, RESUBSCRIBE_MS).unref();
      },
    });
  };
  subscribe();

  return {
    get live() {
      return live;
    },
    next(maxMs, signal) {
      if (pending) {
        pending = false;
        return Promise.resolve("head");
      }
      return new Promise((resolve) => {
        if (signal.aborted) return resolve("timeout");
        const done = (why: "head" | "timeout") => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          waiters = waiters.filter((w) => w !== onHead);
          if (why === "head") pending = false;
          resolve(why);
        };
        const onHead = () => done("head");
        const onAbort = () => done("timeout");
        const timer = setTimeout(() => done("timeout"), maxMs);
        signal.addEventListener("abort", onAbort, { once: true });
        waiters.push(onHead);
      });
    },
    close() {
      closed = true;
      if (retry) clearTimeout(retry);
      unwatch?.();
      closeSocket();
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
  };
}

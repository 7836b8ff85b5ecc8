import type { Logger } from "pino";
import WebSocket from "ws";
import { redactUrl } from "../config/redact.js";

/**
 * Wakes a caught-up source when its chain announces a new block, over the node's WebSocket
 * (`eth_subscribe("newHeads")` over the `ws` client: one socket per watcher, subscribed again 5 s
 * after it drops). Polling stays the fallback: `next` also
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
  let socket: WebSocket | null = null;
  let retry: NodeJS.Timeout | null = null;

  const wake = () => {
    pending = true;
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  // One socket per watcher, owned here, so that close() ends it for sure (a socket left open
  // would keep a stopping process alive). The subscription is the JSON-RPC `eth_subscribe` of
  // geth, reth and anvil: one request, then an `eth_subscription` message per new head.
  const down = (why: string) => {
    live = false;
    socket = null;
    if (!warned) log.info({ url: redactUrl(wsUrl), err: why }, "no newHeads subscription; polling");
    warned = true;
    if (!closed && retry === null)
      retry = setTimeout(() => {
        retry = null;
        subscribe();
      }, RESUBSCRIBE_MS).unref();
  };
  const subscribe = () => {
    if (closed) return;
    const ws = new WebSocket(wsUrl, { handshakeTimeout: 10_000, maxPayload: 1 << 20 });
    socket = ws;
    ws.on("open", () =>
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] })),
    );
    ws.on("message", (data) => {
      let msg: { id?: number; error?: { message?: string }; method?: string };
      try {
        msg = JSON.parse(data.toString()) as typeof msg;
      } catch {
        return;
      }
      if (msg.id === 1 && msg.error) {
        ws.terminate();
        return;
      }
      if (msg.method !== "eth_subscription") return;
      if (!live) log.info({ url: redactUrl(wsUrl) }, "following new heads over the WebSocket");
      live = true;
      warned = false;
      wake();
    });
    ws.on("error", () => {});
    ws.on("close", (code) => {
      if (socket === ws) down(`closed (${code})`);
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
      const ws = socket;
      socket = null;
      ws?.terminate();
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
  };
}

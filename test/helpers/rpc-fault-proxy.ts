import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The chain-side faults a crawler meets on public RPC providers, one kind per proxy:
 * - `rate-limit`: during the period, a share of the requests answered 429 with `Retry-After`;
 * - `too-many-results`: eth_getLogs over more than `maxLogRange` blocks refused with -32005;
 * - `lagging`: during the period, a share of the requests served by a node `lagBlocks` behind
 *   (eth_blockNumber says head-lag, eth_getBlockByNumber is null above that, eth_getLogs past it
 *   fails with "header not found"), the way a load balancer mixes a lagging node with good ones;
 * - `black-hole`: during the period, connections are accepted and never answered.
 */
export type RpcFaultMode =
  | {
      kind: "rate-limit";
      share: number;
      /** Each 429's Retry-After, picked at random among these (mixed values keep clients apart). */
      retryAfterSecs: readonly number[];
      periodMs: number;
    }
  | { kind: "too-many-results"; maxLogRange: number }
  | { kind: "lagging"; share: number; lagBlocks: number; periodMs: number }
  | { kind: "black-hole"; periodMs: number };

export interface Refusal {
  /** When the 429 was written. */
  at: number;
  /** The Retry-After it carried, as a time. */
  until: number;
}

export interface RpcFaultProxy {
  url: string;
  /** When the proxy started (its fault periods start then). */
  readonly startedAt: number;
  /** Requests received (HTTP requests; a batch is one). */
  readonly requests: number;
  /** Calls answered with the mode's fault. */
  readonly injected: number;
  /** Arrival time of every request. */
  readonly arrivals: readonly number[];
  /** Every 429 sent (rate-limit mode). */
  readonly refusals: readonly Refusal[];
  /**
   * Requests that arrived while a Retry-After was in force, more than `graceMs` after the 429 was
   * sent (a request may leave the client before the 429 reaches it: those are in flight, not sent
   * against the Retry-After).
   */
  early(graceMs: number): number[];
  close(): Promise<void>;
}

interface Call {
  jsonrpc?: string;
  id: unknown;
  method: string;
  params?: unknown[];
}

const hexNum = (v: unknown): number | null =>
  typeof v === "string" && /^0x[0-9a-f]+$/i.test(v) ? Number.parseInt(v, 16) : null;

/** A deterministic random source, so that a failing run can be repeated. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A JSON-RPC proxy on 127.0.0.1 in front of `target` (an anvil) that injects one kind of fault.
 * Periods start when the proxy starts.
 *
 * @example
 * const proxy = await startRpcFaultProxy(anvilUrl, { kind: "black-hole", periodMs: 6_000 });
 */
export async function startRpcFaultProxy(
  target: string,
  mode: RpcFaultMode,
  seed = 12,
): Promise<RpcFaultProxy> {
  const random = seeded(seed);
  const started = Date.now();
  const inPeriod = () => "periodMs" in mode && Date.now() - started < mode.periodMs;
  const held = new Set<ServerResponse>();
  const arrivals: number[] = [];
  const refusals: Refusal[] = [];
  let requests = 0;
  let injected = 0;

  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  const fail = (c: Call, code: number, message: string) => ({
    jsonrpc: "2.0",
    id: c.id,
    error: { code, message },
  });

  /** One call's reply through the lagging node. */
  const lagged = async (c: Call, head: number): Promise<unknown> => {
    const behind = head - (mode as { lagBlocks: number }).lagBlocks;
    if (c.method === "eth_blockNumber") {
      injected++;
      return { jsonrpc: "2.0", id: c.id, result: `0x${behind.toString(16)}` };
    }
    if (c.method === "eth_getBlockByNumber") {
      const n = hexNum(c.params?.[0]);
      if (n === null || n > behind) {
        injected++;
        return { jsonrpc: "2.0", id: c.id, result: null };
      }
    }
    if (c.method === "eth_getLogs") {
      const filter = (c.params?.[0] ?? {}) as { toBlock?: unknown };
      const to = hexNum(filter.toBlock);
      if (to === null || to > behind) {
        injected++;
        return fail(c, -32000, "header not found");
      }
    }
    return forward(c);
  };

  const answer = async (body: Call | Call[], res: ServerResponse): Promise<void> => {
    const calls = Array.isArray(body) ? body : [body];
    const send = (replies: unknown[]) => res.end(JSON.stringify(Array.isArray(body) ? replies : replies[0]));
    switch (mode.kind) {
      case "rate-limit":
        if (inPeriod() && random() < mode.share) {
          injected++;
          const at = Date.now();
          const secs = mode.retryAfterSecs[Math.floor(random() * mode.retryAfterSecs.length)];
          refusals.push({ at, until: at + secs * 1000 });
          res.writeHead(429, { "retry-after": String(secs) });
          res.end("rate limited");
          return;
        }
        break;
      case "black-hole":
        if (inPeriod()) {
          injected++;
          held.add(res);
          res.on("close", () => held.delete(res));
          return;
        }
        break;
      case "too-many-results": {
        const tooWide = (c: Call) => {
          if (c.method !== "eth_getLogs") return false;
          const f = (c.params?.[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown };
          const from = hexNum(f.fromBlock);
          const to = hexNum(f.toBlock);
          return from !== null && to !== null && to - from + 1 > mode.maxLogRange;
        };
        if (calls.some(tooWide)) {
          const replies = await Promise.all(
            calls.map((c) => {
              if (!tooWide(c)) return forward(c);
              injected++;
              return fail(c, -32005, "query returned more than 10000 results");
            }),
          );
          send(replies);
          return;
        }
        break;
      }
      case "lagging":
        if (inPeriod() && random() < mode.share) {
          const head =
            hexNum(
              ((await forward({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber" })) as { result: unknown })
                .result,
            ) ?? 0;
          send(await Promise.all(calls.map((c) => lagged(c, head))));
          return;
        }
        break;
    }
    send(Array.isArray(body) ? ((await forward(body)) as unknown[]) : [await forward(body)]);
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c) => {
      raw += c;
    });
    req.on("end", () => {
      requests++;
      arrivals.push(Date.now());
      let body: Call | Call[];
      try {
        body = JSON.parse(raw) as Call | Call[];
      } catch {
        res.writeHead(400);
        res.end();
        return;
      }
      answer(body, res).catch(() => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    startedAt: started,
    get requests() {
      return requests;
    },
    get injected() {
      return injected;
    },
    arrivals,
    refusals,
    early(graceMs: number) {
      return arrivals.filter((t) => refusals.some((r) => t > r.at + graceMs && t < r.until));
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const FAULT_KINDS = ["429", "5xx", "timeout", "too-many-results", "null-block"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultProxy {
  url: string;
  /** Faults injected so far, by kind. */
  injected: Record<FaultKind, number>;
  requests: number;
  close(): Promise<void>;
}

/**
 * A JSON-RPC proxy in front of a node that fails a share of the requests the way public RPC
 * providers do: 429 with Retry-After, 500/502/503, a request held until the client gives up,
 * "query returned more than 10000 results" for eth_getLogs, and a null block for
 * eth_getBlockByNumber. Seeded, so a failing run can be repeated.
 */
export async function startFaultProxy(
  target: string,
  opts: { rate: number; seed?: number; holdMs?: number },
): Promise<FaultProxy> {
  let state = (opts.seed ?? 7) >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const injected = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const held = new Set<ServerResponse>();
  let requests = 0;

  const forward = forwardTo(target);
  const { server, url } = await listenRpc(async (body, res) => {
    requests++;
    const parsed = JSON.parse(body) as RpcCall | RpcCall[];
    const methods = (Array.isArray(parsed) ? parsed : [parsed]).map((c) => c.method);
    if (random() < opts.rate) {
      // Only faults that make sense for the request: too-many-results is a getLogs answer,
      // a null block a getBlockByNumber one.
      const kinds = FAULT_KINDS.filter(
        (k) =>
          (k !== "too-many-results" || methods.includes("eth_getLogs")) &&
          (k !== "null-block" || methods.includes("eth_getBlockByNumber")),
      );
      const kind = kinds[Math.floor(random() * kinds.length)];
      injected[kind]++;
      switch (kind) {
        case "429":
          res.writeHead(429, { "retry-after": "0" });
          res.end("rate limited");
          return;
        case "5xx":
          res.writeHead([500, 502, 503][Math.floor(random() * 3)]);
          res.end("upstream error");
          return;
        case "timeout":
          // Held past the client's timeout, then dropped.
          held.add(res);
          setTimeout(() => {
            held.delete(res);
            res.destroy();
          }, opts.holdMs ?? 2_000);
          return;
        case "too-many-results":
          res.end(tooManyResults(parsed));
          return;
        case "null-block": {
          const reply = JSON.parse(await forward(body)) as unknown;
          const nullify = (r: { result?: unknown }) => ({ ...r, result: null });
          res.end(
            JSON.stringify(
              Array.isArray(reply)
                ? reply.map((r, i) => (i === 0 ? nullify(r) : r))
                : nullify(reply as { result?: unknown }),
            ),
          );
          return;
        }
      }
    }
    try {
      res.end(await forward(body));
    } catch {
      res.writeHead(502);
      res.end();
    }
  });
  return {
    url,
    injected,
    get requests() {
      return requests;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export interface RpcCall {
  id: number;
  method: string;
  params: unknown[];
}

/** eth_getLogs over more than this many blocks is refused by startShrinkingProxy. */
export const SHRINK_SPAN = 4;

/**
 * A node that refuses eth_getLogs over more than SHRINK_SPAN blocks, or over several blocks that
 * `refuse` names ("query returned more than 10000 results"), as a provider does on a dense range, so that a crawler shrinks its range step
 * by step; it counts the headers asked for, by block, and the logs it answered, by filter and
 * block. `before` runs once the node answered a
 * request and before the answer is sent on (a test can change the chain there).
 */
export async function startShrinkingProxy(
  target: string,
  opts: {
    before?: (calls: RpcCall[]) => Promise<void>;
    /** Also refused: ranges of several blocks this returns true for (a dense block among them). */
    refuse?: (from: number, to: number) => boolean;
  } = {},
) {
  const { before, refuse } = opts;
  const forward = forwardTo(target);
  const headerReads = new Map<number, number>();
  // eth_getLogs answered, by filter and block: `<address> <topic0> <block>` → times.
  const logReads = new Map<string, number>();
  let refused = 0;
  const { server, url } = await listenRpc(async (body, res) => {
    const parsed = JSON.parse(body) as RpcCall | RpcCall[];
    const calls = Array.isArray(parsed) ? parsed : [parsed];
    for (const c of calls)
      if (c.method === "eth_getBlockByNumber") {
        const n = Number(c.params[0]);
        headerReads.set(n, (headerReads.get(n) ?? 0) + 1);
      }
    const wide = calls.some((c) => {
      if (c.method !== "eth_getLogs") return false;
      const f = c.params[0] as { fromBlock: string; toBlock: string };
      const [from, to] = [Number(f.fromBlock), Number(f.toBlock)];
      return to - from + 1 > SHRINK_SPAN || (to > from && refuse?.(from, to) === true);
    });
    if (wide) {
      refused++;
      res.end(tooManyResults(parsed));
      return;
    }
    for (const c of calls)
      if (c.method === "eth_getLogs") {
        const f = c.params[0] as { fromBlock: string; toBlock: string; address?: string; topics: string[] };
        for (let n = Number(f.fromBlock); n <= Number(f.toBlock); n++) {
          const key = `${f.address ?? "*"} ${f.topics[0]} ${n}`;
          logReads.set(key, (logReads.get(key) ?? 0) + 1);
        }
      }
    try {
      const text = await forward(body);
      await before?.(calls);
      res.end(text);
    } catch {
      res.writeHead(502);
      res.end();
    }
  });
  return {
    url,
    headerReads,
    logReads,
    get refused() {
      return refused;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

/** Posts a JSON-RPC body to `target` and returns the answer's text. */
function forwardTo(target: string): (body: string) => Promise<string> {
  return async (body) => {
    const res = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    return res.text();
  };
}

/** The answer of a provider that refuses a range: one error per call of the request. */
function tooManyResults(parsed: RpcCall | RpcCall[]): string {
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  const errors = calls.map((c) => ({
    jsonrpc: "2.0",
    id: c.id,
    error: { code: -32005, message: "query returned more than 10000 results" },
  }));
  return JSON.stringify(Array.isArray(parsed) ? errors : errors[0]);
}

/** An HTTP server on 127.0.0.1 that hands each request's whole body to `handle`. */
async function listenRpc(
  handle: (body: string, res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => void handle(body, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

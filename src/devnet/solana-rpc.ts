import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { AppError } from "../domain/errors.js";
import { decodeTokenAccount, SNS_PROGRAMS } from "../providers/sns/sns-program.js";
import {
  type AccountOptions,
  accountJson,
  address,
  commitmentOf,
  compile,
  type Json,
  matches,
  programAccountsOf,
  RpcError,
} from "./solana-accounts.js";
import type { LedgerCommitment, SolanaLedger } from "./solana-ledger.js";
import { subscriptions } from "./solana-subscriptions.js";

/**
 * The devnet's Solana JSON-RPC (HTTP) and WebSocket endpoint over a `SolanaLedger`, with Solana's
 * semantics for the methods the SNS source and Bonfida's SDK call (docs/sns.md): `getAccountInfo`,
 * `getMultipleAccounts`, `getProgramAccounts` (memcmp, dataSize, dataSlice, withContext),
 * `getTokenLargestAccounts` (-32602 for an unknown mint, as Solana answers), `getSlot`,
 * `getBlockHeight`, `getLatestBlockhash`, `getVersion`, `getHealth`, and over the WebSocket
 * `programSubscribe` / `accountSubscribe` / `slotSubscribe`. Encodings: base64 (and base58 for short data), base64+zstd
 * is refused. Every read and subscription takes Solana's `commitment` (default `finalized`) and
 * answers that commitment's state (the ledger's `finalityLag`); `omniname_advanceSlots` and
 * `omniname_dropUnfinalized` are the devnet's own (time passing, a dropped fork).
 */
export interface SolanaRpc {
  url: string;
  wsUrl: string;
  port: number;
  close(): Promise<void>;
}

/** The devnet's own methods beside Solana's (tests and `devnet simulate`): time passing and forks. */
export const DEVNET_ADVANCE_METHOD = "omniname_advanceSlots";
export const DEVNET_DROP_METHOD = "omniname_dropUnfinalized";

function handle(ledger: SolanaLedger, method: string, params: unknown[]): unknown {
  const opts = (i: number) => (params[i] ?? {}) as AccountOptions;
  const at = (i: number) => commitmentOf(params[i]);
  const contextAt = (c: LedgerCommitment) => ({ slot: ledger.slot(c), apiVersion: "2.2.0" });
  switch (method) {
    case "getAccountInfo": {
      const c = at(1);
      const a = ledger.get(address(params[0]), c);
      return { context: contextAt(c), value: a ? accountJson(a, opts(1)) : null };
    }
    case "getMultipleAccounts": {
      const keys = params[0];
      if (!Array.isArray(keys) || keys.length > 100)
        throw new RpcError(-32602, "Invalid params: too many or no keys");
      const c = at(1);
      return {
        context: contextAt(c),
        value: keys.map((k) => {
          const a = ledger.get(address(k), c);
          return a ? accountJson(a, opts(1)) : null;
        }),
      };
    }
    case "getProgramAccounts": {
      const o = opts(1);
      const c = at(1);
      const filters = compile(o.filters ?? []);
      const out = programAccountsOf(ledger, address(params[0]), c)
        .filter((a) => matches(a, filters))
        .map((a) => ({ pubkey: a.address, account: accountJson(a, o) }));
      return o.withContext ? { context: contextAt(c), value: out } : out;
    }
    case "getTokenLargestAccounts": {
      const c = at(1);
      const mint = ledger.get(address(params[0]), c);
      if (!mint || mint.owner !== SNS_PROGRAMS.splToken)
        throw new RpcError(-32602, "Invalid param: could not find mint");
      const holders = programAccountsOf(ledger, SNS_PROGRAMS.splToken, c)
        .map((a) => ({ a, t: decodeTokenAccount(a.data) }))
        .filter((x) => x.t !== null && x.t.mint === mint.address)
        .sort((x, y) => ((y.t?.amount ?? 0n) > (x.t?.amount ?? 0n) ? 1 : -1))
        .slice(0, 20);
      return {
        context: contextAt(c),
        value: holders.map(({ a, t }) => ({
          address: a.address,
          amount: String(t?.amount ?? 0n),
          decimals: 0,
          uiAmount: Number(t?.amount ?? 0n),
          uiAmountString: String(t?.amount ?? 0n),
        })),
      };
    }
    case "getSlot":
    case "getBlockHeight":
      return ledger.slot(at(0));
    case "getLatestBlockhash": {
      const c = at(0);
      return {
        context: contextAt(c),
        value: { blockhash: ledger.latestBlockhash(), lastValidBlockHeight: ledger.slot(c) + 150 },
      };
    }
    case DEVNET_ADVANCE_METHOD: {
      const n = params[0];
      if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 1_000_000)
        throw new RpcError(-32602, "Invalid params: a number of slots (0 to 1,000,000)");
      return ledger.advance(n);
    }
    case DEVNET_DROP_METHOD:
      return ledger.dropUnfinalized();
    case "getVersion":
      return { "solana-core": "2.2.0", "feature-set": 0 };
    case "getHealth":
      return "ok";
    case "getGenesisHash":
      return ledger.genesisHash();
    default:
      throw new RpcError(-32601, "Method not found");
  }
}

/** Methods of the devnet beside Solana's own (solana-devnet.ts's write method), by name. */
export type ExtraMethods = Readonly<Record<string, (params: unknown[]) => unknown>>;

function answer(ledger: SolanaLedger, req: unknown, extra: ExtraMethods = {}): Json {
  const r = (req ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
  const id = r.id ?? null;
  try {
    if (typeof r.method !== "string") throw new RpcError(-32600, "Invalid request");
    const params = r.params === undefined ? [] : r.params;
    if (!Array.isArray(params)) throw new RpcError(-32602, "Invalid params");
    const own = Object.hasOwn(extra, r.method) ? extra[r.method] : undefined;
    return { jsonrpc: "2.0", result: own ? own(params) : handle(ledger, r.method, params), id };
  } catch (e) {
    const code = e instanceof RpcError ? e.code : -32603;
    return { jsonrpc: "2.0", error: { code, message: (e as Error).message }, id };
  }
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 1 << 20) throw new RpcError(-32600, "request too large");
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Starts the endpoint on 127.0.0.1 (`port` 0: any free port); HTTP and WebSocket share the port.
 * `extra`: methods of the devnet's own, answered over HTTP beside Solana's.
 */
export async function startSolanaRpc(
  ledger: SolanaLedger,
  port = 0,
  extra: ExtraMethods = {},
): Promise<SolanaRpc> {
  const server: Server = createServer(async (req, res) => {
    let out: unknown;
    try {
      const text = await body(req);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new RpcError(-32700, "Parse error");
      }
      out = Array.isArray(parsed)
        ? parsed.map((r) => answer(ledger, r, extra))
        : answer(ledger, parsed, extra);
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32603;
      out = { jsonrpc: "2.0", error: { code, message: (e as Error).message }, id: null };
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(out));
  });
  // A getProgramAccounts of a big devnet (the SNS bench's 100,000 names) may take longer than
  // Node's default request timeout of 300 s on a loaded machine: no timeout on a loopback devnet.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e) =>
      reject(
        new AppError("INTERNAL_ERROR", `the devnet's Solana cannot listen on ${port}: ${e.message}`, {
          cause: e,
        }),
      ),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
  // Attached once the port is bound: a WebSocketServer re-emits its server's errors as its own, and
  // a taken port (another process between probe and bind) would have crashed the process with an
  // unhandled 'error' event instead of rejecting here, where onFreePorts retries past it.
  const wss = new WebSocketServer({ server });
  wss.on("error", () => {});
  wss.on("connection", (ws) => subscriptions(ledger, ws));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    wsUrl: `ws://127.0.0.1:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

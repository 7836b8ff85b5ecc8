import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Address, getBase58Decoder, getBase58Encoder, isAddress } from "@solana/kit";
import { type WebSocket, WebSocketServer } from "ws";
import { AppError } from "../domain/errors.js";
import { decodeTokenAccount, SNS_PROGRAMS } from "../providers/sns/sns-program.js";
import type { LedgerAccount, LedgerCommitment, LedgerListener, SolanaLedger } from "./solana-ledger.js";

type LedgerChange = Parameters<LedgerListener>[1];

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

const b58enc = getBase58Encoder();
const b58dec = getBase58Decoder();

/** A JSON-RPC error with Solana's code (-32602 invalid params, …): what a devnet method throws for bad input. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

interface AccountOptions {
  encoding?: string;
  dataSlice?: { offset: number; length: number };
  commitment?: string;
  filters?: Json[];
  withContext?: boolean;
}

function encodeData(data: Uint8Array, o: AccountOptions): [string, string] | string {
  let d = data;
  if (o.dataSlice) {
    const { offset, length } = o.dataSlice;
    if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length < 0)
      throw new RpcError(-32602, "Invalid params: dataSlice");
    d = data.subarray(offset, offset + length);
  }
  const enc = o.encoding ?? "base58";
  if (enc === "base64") return [Buffer.from(d).toString("base64"), "base64"];
  if (enc === "base58") {
    // Solana refuses base58 above 128 bytes (`Encoded binary (base 58) data should be less than 128 bytes`).
    if (d.length > 128)
      throw new RpcError(
        -32600,
        "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
      );
    return [b58dec.decode(d), "base58"];
  }
  if (enc === "binary") return b58dec.decode(d);
  throw new RpcError(-32602, `Invalid params: unsupported encoding ${enc}`);
}

function accountJson(a: LedgerAccount, o: AccountOptions): Json {
  return {
    data: encodeData(a.data, o),
    executable: false,
    lamports: Number(a.lamports),
    owner: a.owner,
    rentEpoch: 0,
    space: a.data.length,
  };
}

function address(value: unknown): Address {
  if (typeof value !== "string" || !isAddress(value)) throw new RpcError(-32602, `Invalid param: Invalid`);
  return value;
}

type Filter = { dataSize: number } | { offset: number; bytes: Uint8Array };

/** The filters of a request, checked and decoded once (not once per account). */
function compile(filters: Json[]): Filter[] {
  return filters.map((f) => {
    if ("dataSize" in f) return { dataSize: Number(f.dataSize) };
    if (!("memcmp" in f)) throw new RpcError(-32602, "Invalid params: unknown filter");
    const m = f.memcmp as { offset: number; bytes: string; encoding?: string };
    if (typeof m.offset !== "number" || typeof m.bytes !== "string")
      throw new RpcError(-32602, "Invalid params: memcmp");
    const bytes =
      m.encoding === "base64"
        ? new Uint8Array(Buffer.from(m.bytes, "base64"))
        : new Uint8Array(b58enc.encode(m.bytes));
    return { offset: m.offset, bytes };
  });
}

function matches(a: LedgerAccount, filters: readonly Filter[]): boolean {
  for (const f of filters) {
    if ("dataSize" in f) {
      if (a.data.length !== f.dataSize) return false;
      continue;
    }
    if (f.offset + f.bytes.length > a.data.length) return false;
    for (let i = 0; i < f.bytes.length; i++) if (a.data[f.offset + i] !== f.bytes[i]) return false;
  }
  return true;
}

/** A program's accounts at one state of the ledger: LiteSVM is scanned once a state, commitment and program. */
const scans = new WeakMap<SolanaLedger, { version: number; byProgram: Map<string, LedgerAccount[]> }>();
function programAccountsOf(
  ledger: SolanaLedger,
  program: Address,
  commitment: LedgerCommitment,
): LedgerAccount[] {
  let scan = scans.get(ledger);
  if (!scan || scan.version !== ledger.version()) {
    scan = { version: ledger.version(), byProgram: new Map() };
    scans.set(ledger, scan);
  }
  const key = `${commitment === "finalized" ? "f" : "c"}:${program}`;
  let list = scan.byProgram.get(key);
  if (!list) {
    list = ledger.programAccounts(program, commitment);
    scan.byProgram.set(key, list);
  }
  return list;
}

/** A request's commitment, Solana's default `finalized` when absent; -32602 for another word. */
function commitmentOf(o: unknown): LedgerCommitment {
  const c = (o as { commitment?: unknown } | undefined)?.commitment ?? "finalized";
  if (c === "processed" || c === "confirmed" || c === "finalized") return c;
  throw new RpcError(-32602, `Invalid params: unknown commitment ${String(c)}`);
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
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws) => subscriptions(ledger, ws));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e) =>
      reject(new AppError("INTERNAL_ERROR", `the devnet's Solana cannot listen on ${port}: ${e.message}`)),
    );
    server.listen(port, "127.0.0.1", () => resolve());
  });
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

/** A written account as a notification shows it: a closed one has no lamports, no data, the system program. */
function notifiedJson(a: LedgerAccount & { exists: boolean }, o: AccountOptions): Json {
  if (a.exists) return accountJson(a, o);
  const closed = { ...a, data: new Uint8Array(0), owner: "11111111111111111111111111111111" as Address };
  return { ...accountJson(closed, o), lamports: 0 };
}

/**
 * `programSubscribe` (with filters, encoding, dataSlice), `accountSubscribe` (encoding, dataSlice:
 * every write of the account, its closing included) and `slotSubscribe`, as Solana notifies them.
 */
function subscriptions(ledger: SolanaLedger, ws: WebSocket): void {
  let next = 1;
  const subs = new Map<
    number,
    | {
        kind: "program";
        program: Address;
        opts: AccountOptions;
        filters: Filter[];
        commitment: LedgerCommitment;
      }
    | { kind: "account"; address: Address; opts: AccountOptions; commitment: LedgerCommitment }
    | { kind: "slot" }
  >();
  const notify = (method: string, subscription: number, result: unknown) =>
    ws.send(JSON.stringify({ jsonrpc: "2.0", method, params: { result, subscription } }));
  const heard = (level: "confirmed" | "finalized") => (slot: number, accounts: LedgerChange) => {
    for (const [id, s] of subs) {
      if (s.kind !== "slot" && (s.commitment === "finalized") !== (level === "finalized")) continue;
      if (s.kind === "slot" && level === "finalized") continue;
      if (s.kind === "account") {
        for (const a of accounts)
          if (a.address === s.address)
            notify("accountNotification", id, { context: { slot }, value: notifiedJson(a, s.opts) });
        continue;
      }
      if (s.kind === "slot") {
        ws.send(
          JSON.stringify({
            jsonrpc: "2.0",
            method: "slotNotification",
            params: { result: { slot, parent: slot - 1, root: ledger.slot("finalized") }, subscription: id },
          }),
        );
        continue;
      }
      for (const a of accounts) {
        if (a.owner !== s.program) continue;
        if (a.exists && !matches(a, s.filters)) continue;
        notify("programNotification", id, {
          context: { slot },
          value: { pubkey: a.address, account: notifiedJson(a, s.opts) },
        });
      }
    }
  };
  const offs = [
    ledger.onChange(heard("confirmed"), "confirmed"),
    ledger.onChange(heard("finalized"), "finalized"),
  ];
  ws.on("close", () => {
    for (const off of offs) off();
  });
  ws.on("message", (raw) => {
    let req: { id?: unknown; method?: string; params?: unknown[] };
    try {
      req = JSON.parse(String(raw));
    } catch {
      ws.send(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }));
      return;
    }
    const id = req.id ?? null;
    const params = Array.isArray(req.params) ? req.params : [];
    try {
      if (req.method === "programSubscribe") {
        const sub = next++;
        const opts = (params[1] ?? {}) as AccountOptions;
        subs.set(sub, {
          kind: "program",
          program: address(params[0]),
          opts,
          filters: compile(opts.filters ?? []),
          commitment: commitmentOf(opts),
        });
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: sub, id }));
      } else if (req.method === "accountSubscribe") {
        const sub = next++;
        const opts = (params[1] ?? {}) as AccountOptions;
        subs.set(sub, { kind: "account", address: address(params[0]), opts, commitment: commitmentOf(opts) });
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: sub, id }));
      } else if (req.method === "slotSubscribe") {
        const sub = next++;
        subs.set(sub, { kind: "slot" });
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: sub, id }));
      } else if (
        req.method === "programUnsubscribe" ||
        req.method === "accountUnsubscribe" ||
        req.method === "slotUnsubscribe"
      ) {
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: subs.delete(Number(params[0])), id }));
      } else throw new RpcError(-32601, "Method not found");
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32603;
      ws.send(JSON.stringify({ jsonrpc: "2.0", error: { code, message: (e as Error).message }, id }));
    }
  });
}

import { type Address, getBase58Decoder, getBase58Encoder, isAddress } from "@solana/kit";
import type { LedgerAccount, LedgerCommitment, SolanaLedger } from "./solana-ledger.js";

// How the devnet's Solana endpoint (solana-rpc.ts) shows and selects accounts, over HTTP and in
// notifications (solana-subscriptions.ts): encodings, dataSlice, filters, commitment, Solana's
// error codes for bad parameters.

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

export type Json = Record<string, unknown>;

export interface AccountOptions {
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

export function accountJson(a: LedgerAccount, o: AccountOptions): Json {
  return {
    data: encodeData(a.data, o),
    executable: false,
    lamports: Number(a.lamports),
    owner: a.owner,
    rentEpoch: 0,
    space: a.data.length,
  };
}

export function address(value: unknown): Address {
  if (typeof value !== "string" || !isAddress(value)) throw new RpcError(-32602, `Invalid param: Invalid`);
  return value;
}

export type Filter = { dataSize: number } | { offset: number; bytes: Uint8Array };

/** The filters of a request, checked and decoded once (not once per account). */
export function compile(filters: Json[]): Filter[] {
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

export function matches(a: LedgerAccount, filters: readonly Filter[]): boolean {
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
export function programAccountsOf(
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
export function commitmentOf(o: unknown): LedgerCommitment {
  const c = (o as { commitment?: unknown } | undefined)?.commitment ?? "finalized";
  if (c === "processed" || c === "confirmed" || c === "finalized") return c;
  throw new RpcError(-32602, `Invalid params: unknown commitment ${String(c)}`);
}

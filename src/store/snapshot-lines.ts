import { createReadStream } from "node:fs";
import { AppError } from "../domain/errors.js";
import { isNetwork } from "../domain/networks.js";
import { isProvider } from "../domain/providers.js";
import type { DomainRecord } from "../domain/types.js";
import type { Checkpoint, JournalEntry } from "./crawler-log.port.js";
import type { SnapshotDomain } from "./snapshot-sink.port.js";

/*
 * Reading and checking a snapshot's lines (format in snapshot.ts). The file is untrusted input:
 * each line is parsed on its own, bounded in length, and checked field by field before anything
 * of it is written; an error names the line.
 */

/**
 * The longest line read (4 MiB). A domain line of a crawled map is a few KB (a record value is a
 * chain string, rarely past a few hundred bytes); the bound keeps a hostile file from making the
 * importer hold one unbounded line in memory.
 */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

export type SnapshotLine =
  | { type: "domain"; value: SnapshotDomain }
  | { type: "journal"; value: JournalEntry }
  | { type: "checkpoint"; value: Checkpoint };

export function badLine(lineNo: number, why: string): AppError {
  return new AppError("BAD_REQUEST", `snapshot line ${lineNo}: ${why}`);
}

/**
 * The lines of `file` with their numbers (from 1), without the line break; blank lines are
 * skipped. Reads in 1 MiB chunks: memory stays that of a chunk plus the longest line.
 */
export async function* readSnapshotLines(
  file: string,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<{ lineNo: number; text: string }> {
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const decode = (buf: Buffer, lineNo: number): string => {
    const end = buf.length > 0 && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length;
    const text = buf.toString("utf8", 0, end);
    // The lenient decoder (faster) marks a bad sequence with U+FFFD; only then does the strict
    // one tell a bad sequence from a U+FFFD that was in the file.
    if (!text.includes("\ufffd")) return text;
    try {
      return utf8.decode(buf.subarray(0, end));
    } catch {
      throw badLine(lineNo, "not UTF-8");
    }
  };
  const tooLong = (lineNo: number) => badLine(lineNo, `longer than ${maxBytes} bytes`);
  let parts: Buffer[] = [];
  let partBytes = 0;
  let lineNo = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      lineNo++;
      const piece = chunk.subarray(start, nl);
      if (partBytes + piece.length > maxBytes) throw tooLong(lineNo);
      const line = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
      parts = [];
      partBytes = 0;
      start = nl + 1;
      const text = decode(line, lineNo);
      if (text.trim() !== "") yield { lineNo, text };
    }
    const rest = chunk.subarray(start);
    if (partBytes + rest.length > maxBytes) throw tooLong(lineNo + 1);
    if (rest.length > 0) {
      // A copy: the stream may reuse its chunk's memory.
      parts.push(Buffer.from(rest));
      partBytes += rest.length;
    }
  }
  if (partBytes > 0) {
    lineNo++;
    const text = decode(Buffer.concat(parts), lineNo);
    if (text.trim() !== "") yield { lineNo, text };
  }
}

/** Parses a line as a JSON object, or says why it is not one. */
export function parseObject(text: string, lineNo: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badLine(lineNo, "not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw badLine(lineNo, "not a JSON object");
  return value as Record<string, unknown>;
}

type Obj = Record<string, unknown>;

function str(v: Obj, k: string, n: number): string {
  const x = v[k];
  if (typeof x !== "string") throw badLine(n, `${k} must be a string`);
  return x;
}
function strOrNull(v: Obj, k: string, n: number): string | null {
  const x = v[k];
  if (x !== null && typeof x !== "string") throw badLine(n, `${k} must be a string or null`);
  return x;
}
/** Every number of the schema is an integer column (bigint or integer) on both backends. */
function int(v: Obj, k: string, n: number): number {
  const x = v[k];
  if (!Number.isSafeInteger(x)) throw badLine(n, `${k} must be an integer`);
  return x as number;
}
function intOrNull(v: Obj, k: string, n: number): number | null {
  return v[k] === null ? null : int(v, k, n);
}
function bool(v: Obj, k: string, n: number): boolean {
  const x = v[k];
  if (typeof x !== "boolean") throw badLine(n, `${k} must be true or false`);
  return x;
}
function array(v: Obj, k: string, n: number): unknown[] {
  const x = v[k];
  if (!Array.isArray(x)) throw badLine(n, `${k} must be an array`);
  return x;
}
function item(x: unknown, what: string, n: number): Obj {
  if (typeof x !== "object" || x === null || Array.isArray(x)) throw badLine(n, `${what} must be an object`);
  return x as Obj;
}

/** A domain line, field by field; unknown fields are ignored (never written). */
function checkDomain(v: Obj, n: number): SnapshotDomain {
  const provider = v.provider;
  const network = v.network;
  if (typeof provider !== "string" || !isProvider(provider)) throw badLine(n, "unknown provider");
  if (typeof network !== "string" || !isNetwork(network)) throw badLine(n, "unknown network");
  const tags = array(v, "tags", n);
  if (!tags.every((t) => typeof t === "string")) throw badLine(n, "tags must be strings");
  const records: DomainRecord[] = array(v, "records", n).map((x) => {
    const r = item(x, "a record", n);
    return {
      key: str(r, "key", n),
      value: str(r, "value", n),
      nativeKey: str(r, "nativeKey", n),
      nativeValue: str(r, "nativeValue", n),
    };
  });
  // Absent in snapshots written before reverse records were exported.
  const reverse = v.reverse === undefined ? [] : array(v, "reverse", n);
  return {
    domain: {
      provider,
      network,
      tokenId: str(v, "tokenId", n),
      name: str(v, "name", n),
      sld: str(v, "sld", n),
      tld: str(v, "tld", n),
      owner: str(v, "owner", n),
      contractAddress: str(v, "contractAddress", n),
      resolver: strOrNull(v, "resolver", n),
      registeredAt: intOrNull(v, "registeredAt", n),
      registeredBlock: intOrNull(v, "registeredBlock", n),
      expiresAt: intOrNull(v, "expiresAt", n),
      lastUpdateBlock: int(v, "lastUpdateBlock", n),
      lastUpdateAt: int(v, "lastUpdateAt", n),
      baseScore: int(v, "baseScore", n),
      spam: bool(v, "spam", n),
      csamOk: bool(v, "csamOk", n),
      kyc: bool(v, "kyc", n),
      tags: tags as string[],
    },
    records,
    reverse: reverse.map((x) => str(item(x, "a reverse record", n), "address", n)),
  };
}

function checkJournal(v: Obj, n: number): JournalEntry {
  return {
    sourceId: str(v, "sourceId", n),
    chainId: int(v, "chainId", n),
    blockNumber: int(v, "blockNumber", n),
    blockHash: str(v, "blockHash", n),
    logIndex: int(v, "logIndex", n),
    txHash: str(v, "txHash", n),
    contract: str(v, "contract", n),
    tokenId: strOrNull(v, "tokenId", n),
    event: str(v, "event", n),
    blockTime: v.blockTime === undefined ? null : intOrNull(v, "blockTime", n),
  };
}

function checkCheckpoint(v: Obj, n: number): Checkpoint {
  return {
    sourceId: str(v, "sourceId", n),
    chainId: int(v, "chainId", n),
    blockNumber: int(v, "blockNumber", n),
    blockHash: str(v, "blockHash", n),
    updatedAt: int(v, "updatedAt", n),
    state: str(v, "state", n),
    error: strOrNull(v, "error", n),
  };
}

/** A body line (after the header), checked whole. */
export function checkLine(v: Obj, lineNo: number): SnapshotLine {
  switch (v.type) {
    case "domain":
      return { type: "domain", value: checkDomain(v, lineNo) };
    case "journal":
      return { type: "journal", value: checkJournal(v, lineNo) };
    case "checkpoint":
      return { type: "checkpoint", value: checkCheckpoint(v, lineNo) };
    default:
      throw badLine(lineNo, `unknown line type ${JSON.stringify(v.type) ?? "undefined"}`);
  }
}

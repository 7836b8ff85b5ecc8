import { normalizeName } from "../domain/names.js";
import type { DecodeResult, DomainEvent, Hex, RawLog, SourceContracts } from "./provider.js";

/**
 * Hand-written readers of ABI-encoded log data, shared by the three adapters. Logs come from the
 * chain and are attacker-controlled: every offset and length is bounds-checked, nothing throws, and
 * a reader returns `null` for anything malformed. Working on the hex string directly (no bytes
 * round trip) keeps decoding allocation-light: hand decoding measured ~3x faster than viem's here.
 */

/** Record values above this size are refused: no legitimate record is this large. */
const MAX_VALUE_BYTES = 65_536;
/** Record keys above this size are refused. */
const MAX_KEY_BYTES = 512;
// Longest string a reader decodes, before the caller's own size checks.
const MAX_DYNAMIC_BYTES = 1_048_576;

export function ok(...events: DomainEvent[]): DecodeResult {
  return { ok: true, events };
}

export function fail(reason: string): DecodeResult {
  return { ok: false, reason };
}

/** A topic as a lower-case 32-byte hex token id, or null when it is not 32 bytes. */
export function topicId(topic: Hex | undefined): Hex | null {
  if (topic === undefined || topic.length !== 66) return null;
  return topic.toLowerCase() as Hex;
}

/** The address in the low 20 bytes of a topic (lower case). */
export function topicAddress(topic: Hex | undefined): string | null {
  if (topic === undefined || topic.length !== 66) return null;
  return `0x${topic.slice(26).toLowerCase()}`;
}

/** Head word `i` of `data` as 64 hex digits (no 0x), or null past the end. */
export function word(data: Hex, i: number): string | null {
  const start = 2 + i * 64;
  if (data.length < start + 64) return null;
  return data.slice(start, start + 64);
}

/** Head word `i` as an unsigned integer. */
export function wordUint(data: Hex, i: number): bigint | null {
  const w = word(data, i);
  return w === null ? null : BigInt(`0x${w}`);
}

/** Head word `i` as a safe JS number (timestamps, uint16/uint64 fields); null when larger. */
export function wordNumber(data: Hex, i: number): number | null {
  const w = word(data, i);
  if (w === null) return null;
  // Anything above 2^53 needs more than the last 14 hex digits.
  for (let k = 0; k < 50; k++) if (w.charCodeAt(k) !== 48) return null;
  const n = Number.parseInt(w.slice(50), 16);
  return Number.isSafeInteger(n) ? n : null;
}

/** Head word `i` as an address (the low 20 bytes), lower case. */
export function wordAddress(data: Hex, i: number): string | null {
  const w = word(data, i);
  return w === null ? null : `0x${w.slice(24).toLowerCase()}`;
}

/** Reads a number word at a hex-digit position of the data (offsets and lengths). */
function numberAt(data: Hex, pos: number): number | null {
  if (data.length < pos + 64) return null;
  for (let k = pos; k < pos + 56; k++) if (data.charCodeAt(k) !== 48) return null;
  return Number.parseInt(data.slice(pos + 56, pos + 64), 16);
}

/**
 * The dynamic `bytes`/`string` whose offset sits in head word `i`, as hex digits without 0x, or
 * null when the offset or length points outside the data.
 */
export function dynamicHex(data: Hex, i: number): string | null {
  const w = word(data, i);
  if (w === null) return null;
  const offset = numberAt(data, 2 + i * 64);
  if (offset === null || offset % 32 !== 0) return null;
  const lenPos = 2 + offset * 2;
  const len = numberAt(data, lenPos);
  if (len === null || len > MAX_DYNAMIC_BYTES) return null;
  const start = lenPos + 64;
  if (data.length < start + len * 2) return null;
  return data.slice(start, start + len * 2);
}

/** The dynamic string in head word `i`, UTF-8 decoded (invalid sequences become U+FFFD). */
export function dynamicString(data: Hex, i: number): string | null {
  const hex = dynamicHex(data, i);
  if (hex === null) return null;
  return hex.length === 0 ? "" : Buffer.from(hex, "hex").toString("utf8");
}

/** The dynamic `uint256[]` in head word `i`, as 0x-prefixed 32-byte values. */
export function dynamicWords(data: Hex, i: number, max: number): Hex[] | null {
  const w = word(data, i);
  if (w === null) return null;
  const offset = numberAt(data, 2 + i * 64);
  if (offset === null || offset % 32 !== 0) return null;
  const lenPos = 2 + offset * 2;
  const len = numberAt(data, lenPos);
  if (len === null || len > max || data.length < lenPos + 64 + len * 64) return null;
  const out: Hex[] = [];
  for (let k = 0; k < len; k++) {
    const s = lenPos + 64 + k * 64;
    out.push(`0x${data.slice(s, s + 64).toLowerCase()}` as Hex);
  }
  return out;
}

/**
 * Why a record key or value cannot be stored, or null when it can. NUL is refused because
 * PostgreSQL text cannot hold it; sizes are capped so that one log cannot bloat the store.
 */
export function unsafeText(what: string, value: string, maxBytes: number): string | null {
  // Cheap upper bound first: a UTF-8 byte is at most 3 per UTF-16 unit.
  if (value.length * 3 > maxBytes && Buffer.byteLength(value, "utf8") > maxBytes) {
    return `${what} longer than ${maxBytes} bytes`;
  }
  if (value.includes("\u0000")) return `${what} contains a NUL character`;
  return null;
}

/** A record event after the key/value checks, or the reason it is refused. */
export function recordEvent(tokenId: Hex, key: string, value: string): DecodeResult {
  const bad =
    unsafeText("record key", key, MAX_KEY_BYTES) ?? unsafeText("record value", value, MAX_VALUE_BYTES);
  if (bad !== null) return fail(bad);
  if (key.length === 0) return fail("empty record key");
  return ok({ type: "record", tokenId, nativeKey: key, nativeValue: value });
}

export type TokenName = { ok: true; name: string; ascii: string } | { ok: false; reason: string };

/**
 * Normalizes the name a registry published (domain/names.ts rules). A single label is a top-level
 * token (UNS and FNS mint TLDs as NFTs too): it is checked with the same label rules.
 */
export function normalizeTokenName(raw: string): TokenName {
  if (raw.length > 0 && !raw.includes(".")) {
    const r = normalizeName(`${raw}.tld`);
    if (!r.ok) return r;
    if (r.value.labels.length !== 2) return { ok: false, reason: "not a single label" };
    return { ok: true, name: r.value.labels[0], ascii: r.value.ascii.slice(0, -4) };
  }
  const r = normalizeName(raw);
  return r.ok ? { ok: true, name: r.value.name, ascii: r.value.ascii } : r;
}

/**
 * Contract role of an address, from the SourceContracts role keys. A key may carry a variant after
 * a colon (`controller:legacy`, `controller:wrapped`) so one role can list several contracts.
 */
export function roleOf(contracts: SourceContracts, address: string): string | null {
  let roles = roleCache.get(contracts);
  if (roles === undefined) {
    roles = new Map();
    for (const [key, value] of Object.entries(contracts.addresses)) {
      const colon = key.indexOf(":");
      roles.set(value.toLowerCase(), colon < 0 ? key : key.slice(0, colon));
    }
    roleCache.set(contracts, roles);
  }
  return roles.get(address.toLowerCase()) ?? null;
}

/** Every address configured for a role (with or without a `:variant`), lower case. */
export function addressesOf(contracts: SourceContracts, role: string): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(contracts.addresses)) {
    if (key === role || key.startsWith(`${role}:`)) out.push(value.toLowerCase());
  }
  return out;
}

// SourceContracts objects live as long as their source; the cache must not keep them alive.
const roleCache = new WeakMap<SourceContracts, Map<string, string>>();

/** Checks the shape every decoder relies on before reading a log. */
export function hasTopics(log: RawLog, count: number): boolean {
  return log.topics.length === count;
}

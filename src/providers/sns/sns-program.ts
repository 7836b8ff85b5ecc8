import { createHash } from "node:crypto";
import { type Address, getAddressDecoder, getAddressEncoder, isOffCurveAddress } from "@solana/kit";

/**
 * The Solana Name Service's programs and account layouts (docs/chain-facts.md, docs/sns.md), as
 * Bonfida's `sns-sdk` reads them. Pure: no I/O. Every decoder takes attacker-controlled bytes
 * (anyone can create a name account) and answers `null` or a reason, never throws.
 */
export const SNS_PROGRAMS = {
  /** SPL Name Service: every name, reverse and V1/V2 record account. */
  nameService: "namesLPneVptA9Z5rqUDD9tMTWEJwofgaYwp8cawRkX" as Address,
  /** The `.sol` TLD's name account, parent of every second-level `.sol` name. */
  solRoot: "58PwtjSDuFHuUkYjH9BYnnQKHfwo9reZhC2zMJv9JPkx" as Address,
  /** The registrar's central state: class (and owner) of reverse lookup accounts. */
  reverseClass: "33m47vH6Eav6jr5Ry86XjhRft2jRBLDnDgPSHoquXi2Z" as Address,
  /** The SNS records program (Records V2). */
  records: "HP3D4D1ZCmohQGFVms2SS4LCANgJyksBf5s1F77FuFjZ" as Address,
  /** The name offers program, owner of primary ("favourite") domain accounts. */
  nameOffers: "85iDfUvr3HJyLM2zcq5BXSiDvUWfw6cSE1FfNBo8Ap29" as Address,
  /** The name tokenizer: its NFT record account owns a tokenized name; the mint's holder is the owner. */
  tokenizer: "nftD3vbNkNqfj2Sd3HZwbpw4BxxKWr4AjGb9X38JeZk" as Address,
  splToken: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA" as Address,
} as const;

export const HEADER_LEN = 96;
const ZERO32 = new Uint8Array(32);
const encoder = getAddressEncoder();
const decoder = getAddressDecoder();

/**
 * An address's 32 bytes (a copy: the caller may keep or change it). The base58 decode (BigInt
 * arithmetic, twice: kit checks the address, then writes it) is memoized: a pass derives every
 * name's accounts from the same few parents, classes and programs again.
 */
export function addressBytes(a: string): Uint8Array {
  let bytes = decoded.get(a);
  if (bytes === undefined) {
    bytes = new Uint8Array(encoder.encode(a as Address));
    // A bound, not a recency order, as for the derived addresses below.
    if (decoded.size >= DECODED_ENTRIES) decoded.clear();
    decoded.set(a, bytes);
  }
  return bytes.slice();
}
const decoded = new Map<string, Uint8Array>();
const DECODED_ENTRIES = 100_000;
export const addressOf = (bytes: Uint8Array): Address => decoder.decode(bytes);
export const isZero = (bytes: Uint8Array): boolean => bytes.every((b) => b === 0);

/** sha256("SPL Name Service" + name): the hashed name of a name account's seeds. */
export function hashedName(name: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(`SPL Name Service${name}`, "utf8").digest());
}

/**
 * The program-derived address of `seeds` under `program`, computed synchronously (the adapter's
 * `tokenIdOf` is synchronous; @solana/kit's `getProgramDerivedAddress` is async over WebCrypto). The
 * curve check is kit's; `sns-program.test.ts` checks the result against kit's own derivation.
 */
export function findPda(seeds: readonly Uint8Array[], program: Address): Address {
  let key = program as string;
  for (const s of seeds) key += Buffer.from(s.buffer, s.byteOffset, s.byteLength).toString("latin1");
  let pda = pdas.get(key);
  if (pda === undefined) {
    pda = derivePda(seeds, program);
    // A bound, not a recency order: the SNS crawler's passes ask the same few thousand again.
    if (pdas.size >= PDA_CACHE_ENTRIES) pdas.clear();
    pdas.set(key, pda);
  }
  return pda;
}

/**
 * Derived addresses already computed, by program and seeds. A derivation is a pure function that
 * costs a curve check per bump (BigInt arithmetic, ~30-60 µs): the SNS crawler's full pass derives
 * every name's, reverse's and records' accounts again, and under `npm start` those passes took an
 * eighth of the process's CPU while the API was under load (bench/README.md, "Product").
 */
const pdas = new Map<string, Address>();
const PDA_CACHE_ENTRIES = 100_000;

function derivePda(seeds: readonly Uint8Array[], program: Address): Address {
  const programBytes = addressBytes(program);
  const marker = Buffer.from("ProgramDerivedAddress");
  for (let bump = 255; bump >= 0; bump--) {
    const h = createHash("sha256");
    for (const s of seeds) h.update(s);
    h.update(Uint8Array.of(bump)).update(programBytes).update(marker);
    const candidate = addressOf(new Uint8Array(h.digest()));
    if (isOffCurveAddress(candidate)) return candidate;
  }
  throw new Error("no viable bump seed");
}

/** A name account's address: seeds [hashed name, class or zeros, parent or zeros]. */
export function nameAccountOf(
  hashed: Uint8Array,
  nameClass: Address | null,
  parent: Address | null,
): Address {
  return findPda(
    [hashed, nameClass ? addressBytes(nameClass) : ZERO32, parent ? addressBytes(parent) : ZERO32],
    SNS_PROGRAMS.nameService,
  );
}

/** The class of Records V2 accounts: the records program's central state. */
export const RECORDS_V2_CLASS: Address = findPda([addressBytes(SNS_PROGRAMS.records)], SNS_PROGRAMS.records);

/**
 * The name account of a `.sol` name (`alice.sol`, `sub.alice.sol`, with or without `.sol`), or null
 * for a name deeper than a subdomain.
 */
export function domainKeyOf(name: string): Address | null {
  const labels = (name.endsWith(".sol") ? name.slice(0, -4) : name).split(".");
  if (labels.length === 1) return nameAccountOf(hashedName(labels[0]), null, SNS_PROGRAMS.solRoot);
  if (labels.length === 2) {
    const parent = nameAccountOf(hashedName(labels[1]), null, SNS_PROGRAMS.solRoot);
    return nameAccountOf(hashedName(`\0${labels[0]}`), null, parent);
  }
  return null;
}

/** The reverse lookup account of a name account (parent: the parent domain for a subdomain). */
export function reverseKeyOf(domain: Address, parent: Address | null): Address {
  return nameAccountOf(hashedName(domain), SNS_PROGRAMS.reverseClass, parent);
}

/** A V1 record's account: "\x01" + record under the domain. */
export const recordV1KeyOf = (domain: Address, record: string): Address =>
  nameAccountOf(hashedName(`\x01${record}`), null, domain);

/** A Records V2 account: "\x02" + record under the domain, class the records program's central state. */
export const recordV2KeyOf = (domain: Address, record: string): Address =>
  nameAccountOf(hashedName(`\x02${record}`), RECORDS_V2_CLASS, domain);

/** The primary ("favourite") domain account of a wallet. */
export const primaryKeyOf = (wallet: Address): Address =>
  findPda([Buffer.from("favourite_domain"), addressBytes(wallet)], SNS_PROGRAMS.nameOffers);

/** The mint of a tokenized name, and the tokenizer's NFT record (the registry owner while tokenized). */
export const tokenizedMintOf = (domain: Address): Address =>
  findPda([Buffer.from("tokenized_name"), addressBytes(domain)], SNS_PROGRAMS.tokenizer);
export const nftRecordOf = (domain: Address): Address =>
  findPda([Buffer.from("nft_record"), addressBytes(domain)], SNS_PROGRAMS.tokenizer);

/** A name registry account: the 96-byte header and what follows it. */
export interface NameRegistry {
  parent: Address;
  owner: Address;
  nameClass: Address;
  data: Uint8Array;
}

export function decodeNameRegistry(bytes: Uint8Array): NameRegistry | { error: string } {
  if (bytes.length < HEADER_LEN)
    return { error: `name account of ${bytes.length} bytes, below the 96-byte header` };
  return {
    parent: addressOf(bytes.subarray(0, 32)),
    owner: addressOf(bytes.subarray(32, 64)),
    nameClass: addressOf(bytes.subarray(64, 96)),
    data: bytes.subarray(HEADER_LEN),
  };
}

export function encodeNameRegistry(
  r: { parent: Address | null; owner: Address; nameClass: Address | null },
  data: Uint8Array,
): Uint8Array {
  const out = new Uint8Array(HEADER_LEN + data.length);
  if (r.parent) out.set(addressBytes(r.parent), 0);
  out.set(addressBytes(r.owner), 32);
  if (r.nameClass) out.set(addressBytes(r.nameClass), 64);
  out.set(data, HEADER_LEN);
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A reverse account's content: u32 LE length + the name (a subdomain's label starts with NUL). */
export function decodeReverse(data: Uint8Array): string | { error: string } {
  if (data.length < 4) return { error: "reverse content shorter than its length prefix" };
  const len = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(0, true);
  if (len === 0 || len > 255 || 4 + len > data.length)
    return { error: `reverse name length ${len} out of bounds` };
  try {
    return utf8.decode(data.subarray(4, 4 + len)).replace(/^\0/, "");
  } catch {
    return { error: "reverse name is not UTF-8" };
  }
}

export function encodeReverse(name: string): Uint8Array {
  const bytes = Buffer.from(name, "utf8");
  const out = new Uint8Array(4 + bytes.length);
  new DataView(out.buffer).setUint32(0, bytes.length, true);
  out.set(bytes, 4);
  return out;
}

/** Validation kinds of a Records V2 header (the records program's `Validation`), and their id lengths. */
export const VALIDATION = { None: 0, Solana: 1, Ethereum: 2, UnverifiedSolana: 3 } as const;
const VALIDATION_LEN: Record<number, number> = { 0: 0, 1: 32, 2: 20, 3: 32 };

/** A Records V2 account's content after the name header: u16 staleness, u16 RoA, u32 length, ids, content. */
export interface RecordV2 {
  stalenessValidation: number;
  stalenessId: Uint8Array;
  roaValidation: number;
  content: Uint8Array;
}

/** The longest record content served (the program allows more; a value above this is refused). */
export const MAX_RECORD_CONTENT = 10_240;

export function decodeRecordV2(data: Uint8Array): RecordV2 | { error: string } {
  if (data.length < 8) return { error: "record header shorter than 8 bytes" };
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const staleness = view.getUint16(0, true);
  const roa = view.getUint16(2, true);
  const length = view.getUint32(4, true);
  const sLen = VALIDATION_LEN[staleness];
  const rLen = VALIDATION_LEN[roa];
  if (sLen === undefined || rLen === undefined) return { error: `unknown validation ${staleness}/${roa}` };
  if (length > MAX_RECORD_CONTENT)
    return { error: `record content of ${length} bytes above ${MAX_RECORD_CONTENT}` };
  const start = 8 + sLen + rLen;
  if (data.length < 8 + length || length < sLen + rLen)
    return { error: "record content shorter than announced" };
  return {
    stalenessValidation: staleness,
    stalenessId: data.subarray(8, 8 + sLen),
    roaValidation: roa,
    content: data.subarray(start, 8 + length),
  };
}

export function encodeRecordV2(r: { staleness: Address | null; content: Uint8Array }): Uint8Array {
  const sId = r.staleness ? addressBytes(r.staleness) : new Uint8Array(0);
  const body = new Uint8Array(sId.length + r.content.length);
  body.set(sId, 0);
  body.set(r.content, sId.length);
  const out = new Uint8Array(8 + body.length);
  const view = new DataView(out.buffer);
  view.setUint16(0, r.staleness ? VALIDATION.Solana : VALIDATION.None, true);
  view.setUint16(2, VALIDATION.None, true);
  view.setUint32(4, body.length, true);
  out.set(body, 8);
  return out;
}

/** A primary domain account: u8 tag + the name account. */
export function decodePrimary(data: Uint8Array): Address | null {
  return data.length >= 33 ? addressOf(data.subarray(1, 33)) : null;
}

export function encodePrimary(domain: Address): Uint8Array {
  const out = new Uint8Array(33);
  out[0] = 1;
  out.set(addressBytes(domain), 1);
  return out;
}

/** SPL token account (165 bytes): mint, owner, amount. */
export const TOKEN_ACCOUNT_LEN = 165;
export const MINT_LEN = 82;

export function decodeTokenAccount(
  data: Uint8Array,
): { mint: Address; owner: Address; amount: bigint } | null {
  if (data.length !== TOKEN_ACCOUNT_LEN) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    mint: addressOf(data.subarray(0, 32)),
    owner: addressOf(data.subarray(32, 64)),
    amount: view.getBigUint64(64, true),
  };
}

export function encodeTokenAccount(t: { mint: Address; owner: Address; amount: bigint }): Uint8Array {
  const out = new Uint8Array(TOKEN_ACCOUNT_LEN);
  out.set(addressBytes(t.mint), 0);
  out.set(addressBytes(t.owner), 32);
  const view = new DataView(out.buffer);
  view.setBigUint64(64, t.amount, true);
  out[108] = 1; // state: initialized
  return out;
}

/** An SPL mint with no mint authority, supply `supply`, 0 decimals, initialized. */
export function encodeMint(supply: bigint): Uint8Array {
  const out = new Uint8Array(MINT_LEN);
  const view = new DataView(out.buffer);
  view.setBigUint64(36, supply, true);
  out[44] = 0;
  out[45] = 1;
  return out;
}

/** The tokenizer's NFT record (98 bytes): tag (2 active), nonce, name account, owner, mint. */
export function encodeNftRecord(r: { domain: Address; owner: Address; mint: Address }): Uint8Array {
  const out = new Uint8Array(98);
  out[0] = 2;
  out[1] = 255;
  out.set(addressBytes(r.domain), 2);
  out.set(addressBytes(r.owner), 34);
  out.set(addressBytes(r.mint), 66);
  return out;
}

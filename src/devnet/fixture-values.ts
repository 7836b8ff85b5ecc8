import { createHash } from "node:crypto";
import dnsPacket from "dns-packet";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";

/**
 * The values of the fixture world (fixtures.ts): anvil's accounts, deterministic generators
 * (addresses, hashes, CIDs, DNS wire records) and one encoder per protocol that writes a profile
 * as that protocol's native records.
 */

// anvil's default accounts 0–9 (mnemonic "test test … junk"), lower case.
export const ANVIL_ACCOUNTS = [
  "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
  "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
  "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
  "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
  "0x976ea74026e726554db657fa54763abd0c3a0aa9",
  "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
  "0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f",
  "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
] as const;
export const ANVIL_LABELS = [
  "alice",
  "bob",
  "carol",
  "dave",
  "erin",
  "frank",
  "grace",
  "heidi",
  "ivan",
  "judy",
] as const;

// ---------------------------------------------------------------------------------------------
// Deterministic value generators.

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** mulberry32: small, fast, and the same sequence on every platform for a given seed. */
export function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function base58(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString("hex") || "0"}`);
  let out = "";
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

export function generatedAddress(seed: string): string {
  return `0x${sha256(`omniname-fixture-owner:${seed}`).subarray(0, 20).toString("hex")}`;
}

/** hash160 of the Bitcoin genesis coinbase key: the P2PKH address 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa. */
export const GENESIS_HASH160 = "62e907b15cbf27d5425399ebf6f0fb50ebb88f18";

export function hash160(seed: string): string {
  return sha256(`omniname-fixture-btc:${seed}`).subarray(0, 20).toString("hex");
}

/** Base58Check P2PKH address of a 20-byte hash (version byte 0x00). */
export function p2pkhAddress(h160: string): string {
  const payload = Buffer.concat([Buffer.from([0]), Buffer.from(h160, "hex")]);
  const check = createHash("sha256").update(createHash("sha256").update(payload).digest()).digest();
  return base58(Buffer.concat([payload, check.subarray(0, 4)]));
}

/** The ENS `addr(0)` value: the P2PKH scriptPubkey OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG. */
function p2pkhScript(h160: string): string {
  return `0x76a914${h160}88ac`;
}

/** sha2-256 multihash of a seed: the same content as a CIDv0 (FNS, UNS) and an ENS contenthash. */
function multihash(seed: string): Buffer {
  return Buffer.concat([Buffer.from([0x12, 0x20]), sha256(`omniname-fixture-ipfs:${seed}`)]);
}

export function cidV0(seed: string): string {
  return base58(multihash(seed));
}

/** ENSIP-7 contenthash: ipfs-ns (0xe3 0x01), CIDv1 (0x01), dag-pb (0x70), then the multihash. */
function ensContenthash(seed: string): string {
  return `0xe3010170${multihash(seed).toString("hex")}`;
}

// dns-packet encodes a single resource record with `answer.encode`; its type definitions omit it.
const rrCodec = (dnsPacket as unknown as { answer: { encode(rr: object): Buffer } }).answer;

/** ENS `setDNSRecords` input: the RRset in wire format, one A record per address, TTL 3600. */
function ensDnsARecords(asciiName: string, addresses: string[]): string {
  const rrs = addresses.map((data) =>
    rrCodec.encode({ type: "A", class: "IN", name: asciiName, ttl: 3600, data }),
  );
  return `0x${Buffer.concat(rrs).toString("hex")}`;
}

// ---------------------------------------------------------------------------------------------
// A profile says what a domain holds; one encoder per protocol writes it as native records.

export interface Profile {
  eth?: string[];
  /** hash160 values; FNS/UNS store the P2PKH address, ENS the scriptPubkey. */
  btc?: string[];
  usdt?: string;
  website?: string[];
  a?: string[];
  aaaa?: string[];
  txt?: string[];
  cname?: string;
  fullname?: string;
  email?: string;
  avatar?: string;
  description?: string;
  twitter?: string[];
  github?: string;
  /** IPFS content seeds (see cidV0). */
  ipfs?: string[];
}

export type Rec = [string, string];
const PROFILE_FIELDS = ["fullname", "email", "avatar", "description"] as const;

// FNS native keys are the canonical keys themselves.
export function fnsRecords(p: Profile): Rec[] {
  const r: Rec[] = [];
  const many = (form: string, values: string[] | undefined) => {
    for (const [i, v] of (values ?? []).entries()) r.push([`${form}.${i}`, v]);
  };
  many("token.ETH", p.eth);
  many("token.BTC", p.btc?.map(p2pkhAddress));
  if (p.usdt) r.push(["token.USDT.0", p.usdt]);
  many("redirect.WEBSITE", p.website);
  many("record.A", p.a);
  many("record.AAAA", p.aaaa);
  many("record.TXT", p.txt);
  if (p.cname) r.push(["record.CNAME.0", p.cname]);
  for (const f of PROFILE_FIELDS) if (p[f] !== undefined) r.push([`profile.OWNER.${f}`, p[f]]);
  many("social.TWITTER", p.twitter);
  if (p.github) r.push(["social.GITHUB.0", p.github]);
  many("content.IPFS", p.ipfs?.map(cidV0));
  return r;
}

// UNS holds one value per key, except dns.<TYPE>, a JSON array. Fields UNS has no key for are dropped.
export function unsRecords(p: Profile): Rec[] {
  const r: Rec[] = [];
  if (p.eth?.[0]) r.push(["crypto.ETH.address", p.eth[0]]);
  if (p.btc?.[0]) r.push(["crypto.BTC.address", p2pkhAddress(p.btc[0])]);
  if (p.usdt) r.push(["crypto.USDT.version.ERC20.address", p.usdt]);
  if (p.website?.[0]) r.push(["browser.redirect_url", p.website[0]]);
  if (p.a?.length) r.push(["dns.A", JSON.stringify(p.a)], ["dns.A.ttl", "3600"]);
  if (p.aaaa?.length) r.push(["dns.AAAA", JSON.stringify(p.aaaa)]);
  if (p.email) r.push(["whois.email.value", p.email]);
  if (p.avatar) r.push(["social.picture.value", p.avatar]);
  if (p.twitter?.[0]) r.push(["social.twitter.username", p.twitter[0]]);
  if (p.ipfs?.[0]) r.push(["ipfs.html.value", cidV0(p.ipfs[0])]);
  return r;
}

// ENS: addr(coinType), text(key), contenthash and DNS records, each one value.
export function ensRecords(asciiName: string, p: Profile): Rec[] {
  const r: Rec[] = [];
  if (p.eth?.[0]) r.push(["addr.60", p.eth[0]]);
  if (p.btc?.[0]) r.push(["addr.0", p2pkhScript(p.btc[0])]);
  if (p.website?.[0]) r.push(["text.url", p.website[0]]);
  if (p.fullname) r.push(["text.name", p.fullname]);
  if (p.avatar) r.push(["text.avatar", p.avatar]);
  if (p.email) r.push(["text.email", p.email]);
  if (p.description) r.push(["text.description", p.description]);
  if (p.twitter?.[0]) r.push(["text.com.twitter", p.twitter[0]]);
  if (p.github) r.push(["text.com.github", p.github]);
  if (p.ipfs?.[0]) r.push(["contenthash", ensContenthash(p.ipfs[0])]);
  if (p.a?.length) r.push(["dns.A", ensDnsARecords(asciiName, p.a)]);
  return r;
}

/** One domain of the world before its registration time and records are fixed. */
export interface Draft {
  provider: Provider;
  network: Network;
  name: string;
  owner: string;
  profile: Profile;
  reverse?: boolean;
  expired?: boolean;
  expires?: boolean;
  previousOwners?: string[];
  resetBefore?: Profile;
}

import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
} from "node:crypto";
import { readFileSync } from "node:fs";
import type { Config } from "../config/config.schema.js";
import { dataDirSecret } from "../config/data-dir-secret.js";

/** ECDSA Curve P-256 with SHA-256 (RFC 6605), the only algorithm we sign with. */
export const DNSSEC_ALGORITHM = 13;
/** DNSKEY flags of a combined signing key (CSK): Zone Key + Secure Entry Point (RFC 4034 §2.1.1). */
export const CSK_FLAGS = 257;
/** The DATA_DIR file a key is generated into on first use (mode 0600, docs/dns.md "DNSSEC"). */
export const DNSSEC_KEY_FILE = "dnssec.key";
/** A key file holds at most this many keys (a rollover needs two). */
const MAX_KEYS = 4;

/** One signing key: its private half, and its DNSKEY RDATA and key tag (the same in every zone). */
export interface DnssecKey {
  privateKey: KeyObject;
  /** DNSKEY RDATA (flags, protocol 3, algorithm 13, X‖Y), without RDLENGTH. */
  dnskey: Buffer;
  keyTag: number;
}

/**
 * The keys of the file: each is published in the DNSKEY RRset and signs every RRset (a rollover
 * adds a second key, so that both sign for a while, then retires the first: docs/dns.md).
 */
export interface DnssecKeys {
  keys: DnssecKey[];
}

/** A new P-256 key as PKCS#8 PEM. */
export function generateDnssecKeyPem(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString().trim();
}

/** RFC 4034 Appendix B. */
export function keyTagOf(rdata: Buffer): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i] : rdata[i] << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

function keyOf(privateKey: KeyObject): DnssecKey {
  const jwk = createPublicKey(privateKey).export({ format: "jwk" });
  if (jwk.crv !== "P-256" || typeof jwk.x !== "string" || typeof jwk.y !== "string")
    throw new Error("a DNSSEC key must be an EC key on curve P-256 (algorithm 13)");
  const head = Buffer.from([CSK_FLAGS >> 8, CSK_FLAGS & 0xff, 3, DNSSEC_ALGORITHM]);
  const dnskey = Buffer.concat([head, Buffer.from(jwk.x, "base64url"), Buffer.from(jwk.y, "base64url")]);
  return { privateKey, dnskey, keyTag: keyTagOf(dnskey) };
}

/** The PEM private-key blocks of a key file's text, in order. */
export function pemKeyBlocks(text: string): string[] {
  return text.match(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/g) ?? [];
}

/** The keys of a key file's text, in order; throws on a file without any or with too many. */
export function parseDnssecKeys(pem: string, source: string): DnssecKeys {
  const blocks = pemKeyBlocks(pem);
  if (blocks.length === 0) throw new Error(`${source}: no PEM private key (expected PKCS#8 P-256 keys)`);
  if (blocks.length > MAX_KEYS) throw new Error(`${source}: ${blocks.length} keys, at most ${MAX_KEYS}`);
  const keys = blocks.map((b, i) => {
    try {
      return keyOf(createPrivateKey(b));
    } catch (e) {
      throw new Error(`${source}: key ${i + 1}: ${(e as Error).message}`);
    }
  });
  if (new Set(keys.map((k) => k.keyTag)).size !== keys.length)
    throw new Error(`${source}: the same key twice (or two keys with one key tag)`);
  return { keys };
}

/** Where the keys are read: DNSSEC_KEY_FILE, else DATA_DIR/dnssec.key. */
export function dnssecKeyPath(config: Pick<Config, "dataDir" | "dnssecKeyFile">): string {
  return config.dnssecKeyFile ?? `${config.dataDir}/${DNSSEC_KEY_FILE}`;
}

/**
 * The keys of this installation: DNSSEC_KEY_FILE when set (never written), else DATA_DIR/dnssec.key,
 * generated on first use (mode 0600, one file for every DNS worker: the first writer wins).
 */
export function loadDnssecKeys(config: Pick<Config, "dataDir" | "dnssecKeyFile">): DnssecKeys {
  if (config.dnssecKeyFile !== undefined)
    return parseDnssecKeys(readFileSync(config.dnssecKeyFile, "utf8"), config.dnssecKeyFile);
  const pem = dataDirSecret(config.dataDir, DNSSEC_KEY_FILE, generateDnssecKeyPem);
  return parseDnssecKeys(pem, dnssecKeyPath(config));
}

/** A name in canonical wire form (RFC 4034 §6.2): lower case, uncompressed, root label last. */
export function canonicalNameWire(name: string): Buffer {
  const labels = name === "" || name === "." ? [] : name.replace(/\.$/, "").split(".");
  const parts: Buffer[] = [];
  for (const l of labels) {
    const bytes = Buffer.from(
      l.replace(/[A-Z]/g, (c) => c.toLowerCase()),
      "latin1",
    );
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** The DS RDATA (digest type 2, SHA-256) of a key for a zone (RFC 4509). */
export function dsRdata(origin: string, key: DnssecKey): Buffer {
  const digest = createHash("sha256").update(canonicalNameWire(origin)).update(key.dnskey).digest();
  const head = Buffer.alloc(4);
  head.writeUInt16BE(key.keyTag, 0);
  head[2] = DNSSEC_ALGORITHM;
  head[3] = 2;
  return Buffer.concat([head, digest]);
}

/** `origin. TTL IN DNSKEY 257 3 13 base64` */
export function dnskeyText(origin: string, key: DnssecKey, ttl: number): string {
  return `${origin}.\t${ttl}\tIN\tDNSKEY\t${CSK_FLAGS} 3 ${DNSSEC_ALGORITHM} ${key.dnskey.subarray(4).toString("base64")}`;
}

/** `origin. TTL IN DS keytag 13 2 HEX` */
export function dsText(origin: string, key: DnssecKey, ttl: number): string {
  const ds = dsRdata(origin, key);
  return `${origin}.\t${ttl}\tIN\tDS\t${key.keyTag} ${DNSSEC_ALGORITHM} 2 ${ds.subarray(4).toString("hex").toUpperCase()}`;
}

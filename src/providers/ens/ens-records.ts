import { getCoderByCoinType } from "@ensdomains/address-encoder";
import { hexToBytes, isHex } from "viem";
import { decodeContenthash } from "./contenthash.js";
import { renderRRset } from "./dns-wire.js";

/**
 * ENS native record keys (the convention the devnet seeder and fixtures follow) → canonical keys.
 *
 * | native            | value                        | canonical                                   |
 * |-------------------|------------------------------|---------------------------------------------|
 * | addr.<coinType>   | address bytes, 0x hex        | token.<SYMBOL>.0 (address-encoder coin name, upper case) |
 * | text.url          | text                         | redirect.WEBSITE.0                          |
 * | text.name/avatar/email/description | text        | profile.OWNER.<field>                       |
 * | text.com.twitter, text.com.github, … | text      | social.<PLATFORM>.0                         |
 * | contenthash       | bytes, 0x hex                | content.<PROTOCOL>.0 (see contenthash.ts)   |
 * | dns.<TYPE>        | the RRset's wire RRs, 0x hex | record.<TYPE>.0…n and record.<TYPE>.ttl     |
 *
 * Everything else (other text keys, `dns.<owner>.<TYPE>` of names below the domain, unknown coin
 * types, undecodable bytes) is kept under its native key.
 */

type Mapped = Array<{ key: string; value: string }>;

const PROFILE_TEXT = new Set(["name", "avatar", "email", "description"]);

/** ENSIP-5 service keys (reverse-DNS form) → platform. */
const SOCIAL_TEXT: Record<string, string> = {
  "com.twitter": "TWITTER",
  "com.x": "TWITTER",
  "com.github": "GITHUB",
  "com.discord": "DISCORD",
  "com.reddit": "REDDIT",
  "org.telegram": "TELEGRAM",
  "com.linkedin": "LINKEDIN",
  "com.youtube": "YOUTUBE",
  "com.instagram": "INSTAGRAM",
  "xyz.farcaster": "FARCASTER",
};

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function bytesOf(value: string): Uint8Array | null {
  return value.length >= 4 && value.length % 2 === 0 && isHex(value, { strict: true })
    ? hexToBytes(value as `0x${string}`)
    : null;
}

function mapAddr(coinTypeText: string, value: string): Mapped | null {
  if (!/^\d{1,20}$/.test(coinTypeText)) return null;
  const coinType = Number(coinTypeText);
  const bytes = bytesOf(value);
  if (bytes === null || !Number.isSafeInteger(coinType)) return null;
  let symbol: string;
  let text: string;
  try {
    const coder = getCoderByCoinType(coinType);
    if ((coder as { isUnknownChain?: boolean }).isUnknownChain === true) return null;
    // address-encoder renames coins whose SLIP-44 type was superseded (`etcLegacy` for 61): same symbol.
    symbol = coder.name.replace(/Legacy$/, "").toUpperCase();
    text = coder.encode(bytes);
  } catch {
    return null;
  }
  // The store keeps addresses lower case; EVM checksums are presentation only.
  if (EVM_ADDRESS.test(text)) text = text.toLowerCase();
  if (!/^[A-Z0-9_]{1,32}$/.test(symbol)) return null;
  return [{ key: `token.${symbol}.0`, value: text }];
}

function mapText(key: string, value: string): Mapped | null {
  if (key === "url") return [{ key: "redirect.WEBSITE.0", value }];
  if (PROFILE_TEXT.has(key)) return [{ key: `profile.OWNER.${key}`, value }];
  const platform = SOCIAL_TEXT[key];
  return platform === undefined ? null : [{ key: `social.${platform}.0`, value }];
}

function mapContenthash(value: string): Mapped | null {
  const bytes = bytesOf(value);
  const decoded = bytes === null ? null : decodeContenthash(bytes);
  return decoded === null ? null : [{ key: `content.${decoded.protocol}.0`, value: decoded.value }];
}

function mapDns(type: string, value: string): Mapped | null {
  if (!/^[A-Z0-9]{1,16}$/.test(type)) return null;
  const bytes = bytesOf(value);
  const rrset = bytes === null ? null : renderRRset(bytes, type);
  if (rrset === null) return null;
  const out: Mapped = rrset.values.map((v, i) => ({ key: `record.${type}.${i}`, value: v }));
  out.push({ key: `record.${type}.ttl`, value: String(rrset.ttl) });
  return out;
}

function mapEnsKey(key: string, value: string): Mapped | null {
  if (key.startsWith("addr.")) return mapAddr(key.slice(5), value);
  if (key.startsWith("text.")) return mapText(key.slice(5), value);
  if (key === "contenthash") return mapContenthash(value);
  // `dns.<TYPE>` only: `dns.<owner>.<TYPE>` (records of names below the domain) has two dots.
  if (key.startsWith("dns.") && key.indexOf(".", 4) < 0) return mapDns(key.slice(4), value);
  return null;
}

/**
 * Maps one ENS record. An empty value (a deletion) maps to nothing. Never throws: malformed bytes
 * keep the record under its native key.
 *
 * @example mapEnsRecord("addr.60", "0xd8da6bf26964af9d7eed9e03e53415d37aa96045") // [{ key: "token.ETH.0", value: "0xd8da…6045" }]
 */
export function mapEnsRecord(nativeKey: string, nativeValue: string): Mapped {
  if (nativeValue === "") return [];
  let mapped: Mapped | null;
  try {
    mapped = mapEnsKey(nativeKey, nativeValue);
  } catch {
    mapped = null;
  }
  if (mapped === null || mapped.some((m) => m.value.includes("\u0000"))) {
    return [{ key: nativeKey, value: nativeValue }];
  }
  return mapped;
}

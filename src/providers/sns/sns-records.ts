import punycode from "punycode/punycode.js";
import { addressOf } from "./sns-program.js";

/**
 * SNS record names (the SDK's `Record` enum) and how their content is encoded, and the mapping onto
 * omniname's canonical keys (docs/records.md). Content decoding follows Bonfida's
 * `deserializeRecordV2Content` (V2) and `deserializeRecord` (V1, fixed sizes, trailing zeros).
 */
export const SNS_RECORDS = [
  "IPFS",
  "ARWV",
  "SOL",
  "ETH",
  "BTC",
  "LTC",
  "DOGE",
  "email",
  "url",
  "discord",
  "github",
  "reddit",
  "twitter",
  "telegram",
  "pic",
  "SHDW",
  "POINT",
  "BSC",
  "INJ",
  "backpack",
  "A",
  "AAAA",
  "CNAME",
  "TXT",
  "background",
  "BASE",
  "IPNS",
  "bio",
] as const;
export type SnsRecord = (typeof SNS_RECORDS)[number];

/** The records whose content is binary; every other record is UTF-8 text (the SDK's UTF8_ENCODED). */
const BINARY = new Set<string>(["SOL", "ETH", "BSC", "INJ", "A", "AAAA", "background", "BASE"]);
const UTF8 = new Set<string>(SNS_RECORDS.filter((r) => !BINARY.has(r)));
const EVM = new Set<string>(["ETH", "BSC", "BASE"]);
/** V1's fixed content sizes (the SDK's RECORD_V1_SIZE); others are UTF-8 padded with zeros. */
const V1_SIZE: Record<string, number> = {
  SOL: 96,
  ETH: 20,
  BSC: 20,
  INJ: 20,
  A: 4,
  AAAA: 16,
  background: 32,
};

const utf8 = new TextDecoder("utf-8", { fatal: true });

function ip(bytes: Uint8Array): string | null {
  if (bytes.length === 4) return [...bytes].join(".");
  if (bytes.length !== 16) return null;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  // The shortest form, as ipaddr.js prints it (the SDK's choice): the longest run of zero groups as "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}

/**
 * A Records V2 content as the SDK deserializes it, or null when it cannot be read. CNAME and TXT
 * contents are punycode-encoded (the SDK decodes them with punycode's `decode`).
 */
export function decodeRecordV2Content(record: string, content: Uint8Array): string | null {
  try {
    if (UTF8.has(record)) {
      const s = utf8.decode(content);
      return record === "CNAME" || record === "TXT" ? punycode.decode(s) : s;
    }
    if (record === "SOL") return content.length === 32 ? addressOf(content) : null;
    if (EVM.has(record)) return content.length === 20 ? `0x${Buffer.from(content).toString("hex")}` : null;
    if (record === "A" || record === "AAAA") return ip(content);
    return null; // INJ (bech32) and unknown records: not served
  } catch {
    return null;
  }
}

/**
 * A V1 record's content (the name account's data after its header) as the SDK reads it without
 * signature checks: UTF-8 up to the last non-zero byte, or the fixed-size binary forms. SOL V1
 * records carry a signature the SDK verifies: not served (V2 is where SOL records live).
 */
export function decodeRecordV1Content(record: string, data: Uint8Array): string | null {
  let end = data.length;
  while (end > 0 && data[end - 1] === 0) end--;
  if (end === 0) return null;
  const size = V1_SIZE[record];
  try {
    if (size === undefined) {
      const s = utf8.decode(data.subarray(0, end));
      return record === "CNAME" || record === "TXT" ? punycode.decode(s) : s;
    }
    if (record === "SOL") return null;
    if (end !== size) {
      // The SDK accepts a UTF-8 form of some binary records (0x… for ETH/BSC, a dotted IP).
      const s = utf8.decode(data.subarray(0, end));
      if ((record === "ETH" || record === "BSC") && /^0x[0-9a-fA-F]{40}$/.test(s)) return s;
      if ((record === "A" && /^\d{1,3}(\.\d{1,3}){3}$/.test(s)) || (record === "AAAA" && s.includes(":")))
        return s;
      return null;
    }
    const bytes = data.subarray(0, size);
    if (record === "ETH" || record === "BSC") return `0x${Buffer.from(bytes).toString("hex")}`;
    if (record === "A" || record === "AAAA") return ip(bytes);
    if (record === "background") return addressOf(bytes);
    return null;
  } catch {
    return null;
  }
}

/** SNS record → canonical key (docs/records.md "SNS"); unlisted records keep their SNS name. */
const CANONICAL: Record<string, string> = {
  SOL: "token.SOL.0",
  ETH: "token.ETH.0",
  BTC: "token.BTC.0",
  LTC: "token.LTC.0",
  DOGE: "token.DOGE.0",
  BSC: "token.BNB.0",
  BASE: "token.BASE.0",
  INJ: "token.INJ.0",
  email: "profile.OWNER.email",
  pic: "profile.OWNER.avatar",
  bio: "profile.OWNER.description",
  url: "redirect.WEBSITE.0",
  IPFS: "content.IPFS.0",
  ARWV: "content.ARWEAVE.0",
  IPNS: "content.IPNS.0",
  SHDW: "content.SHDW.0",
  twitter: "social.TWITTER.0",
  discord: "social.DISCORD.0",
  github: "social.GITHUB.0",
  reddit: "social.REDDIT.0",
  telegram: "social.TELEGRAM.0",
  backpack: "social.BACKPACK.0",
  A: "record.A.0",
  AAAA: "record.AAAA.0",
  CNAME: "record.CNAME.0",
  TXT: "record.TXT.0",
  POINT: "content.POINT.0",
  background: "profile.OWNER.background",
};

export function canonicalKeyOf(record: string): string {
  return CANONICAL[record] ?? record;
}

import { createHash } from "node:crypto";
import type { Address } from "@solana/kit";
import {
  addressBytes,
  addressOf,
  domainKeyOf,
  encodeNameRegistry,
  encodeRecordV2,
  encodeReverse,
  MAX_RECORD_CONTENT,
  RECORDS_V2_CLASS,
  recordV2KeyOf,
  reverseKeyOf,
  SNS_PROGRAMS,
} from "../providers/sns/sns-program.js";
import type { SnsWriter } from "./sns-writer.js";

/** A deterministic wallet of the SNS world: 32 bytes of sha256(label) in base58. */
export const snsWallet = (label: string): Address =>
  addressOf(new Uint8Array(createHash("sha256").update(`omniname sns wallet ${label}`).digest()));

export const SNS_WALLETS = {
  alice: snsWallet("alice"),
  bob: snsWallet("bob"),
  carol: snsWallet("carol"),
  dave: snsWallet("dave"),
  eve: snsWallet("eve"),
} as const;

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
const hex = (h: string) => new Uint8Array(Buffer.from(h.replace(/^0x/, ""), "hex"));

/**
 * The demo and test world of `.sol` names (docs/sns.md): registrations, a subdomain, Records V2
 * (fresh and stale) and V1, a tokenized name, primary domains (one stale), and hostile accounts
 * the source must skip and report. The devnet seeds it; the judges read it.
 */
export const SNS_NAMES = [
  "alice.sol",
  "pay.alice.sol",
  "bob.sol",
  "carol.sol",
  "dave.sol",
  "eve.sol",
] as const;

/** Hostile accounts: each must be skipped and reported (its account), never crash the source. */
export const SNS_HOSTILE = {
  /** A name account under the `.sol` root with 40 bytes of data: shorter than the header. */
  short: snsWallet("hostile-short"),
  /** A name account under the root with a class no SNS account has. */
  unknownClass: domainKeyOf("weird-class.sol") as Address,
  /** A registered name whose reverse account holds invalid UTF-8. */
  badUtf8: domainKeyOf("bad-utf8.sol") as Address,
  /** A Records V2 `bio` of huge.sol (a name otherwise served) whose content is longer than served. */
  overlongRecord: recordV2KeyOf(domainKeyOf("huge.sol") as Address, "bio"),
} as const;

/**
 * Seeds SNS_NAMES with their records, tokenization and primaries, and (unless `hostile: false`, as
 * the demo devnet seeds it) the hostile accounts of SNS_HOSTILE.
 */
export function seedSnsWorld(sns: SnsWriter, options: { hostile?: boolean } = {}): void {
  const w = SNS_WALLETS;
  sns.register("alice.sol", w.alice);
  sns.register("pay.alice.sol", w.alice);
  sns.register("bob.sol", w.bob);
  sns.register("carol.sol", w.carol);
  sns.register("dave.sol", w.dave);
  sns.register("eve.sol", w.eve);
  sns.setRecordV2("alice.sol", "SOL", addressBytes(w.alice));
  sns.setRecordV2("alice.sol", "ETH", hex("0x8ba1f109551bd432803012645ac136ddd64dba72"));
  sns.setRecordV2("alice.sol", "url", utf8("https://alice.example"));
  sns.setRecordV2("alice.sol", "twitter", utf8("alice_sol"));
  sns.setRecordV2("alice.sol", "A", Uint8Array.of(192, 0, 2, 10));
  sns.setRecordV1("alice.sol", "IPFS", utf8("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG"));
  sns.setRecordV2("pay.alice.sol", "url", utf8("https://pay.alice.example"));
  sns.setPrimary(w.alice, "alice.sol");
  // bob.sol is tokenized and its NFT held by carol: carol owns it (the SDK's owner rule).
  sns.tokenize("bob.sol", w.carol);
  sns.setRecordV2("bob.sol", "email", utf8("carol@bob.example"));
  sns.setPrimary(w.carol, "bob.sol");
  // carol.sol's url record was signed by alice (a previous owner): stale, not served; its V1 url
  // is not a fallback, because a V2 record exists.
  sns.setRecordV2("carol.sol", "url", utf8("https://stale.example"), { stalenessId: w.alice });
  sns.setRecordV1("carol.sol", "url", utf8("https://v1.carol.example"));
  sns.setRecordV2("carol.sol", "github", utf8("carol"));
  // dave.sol has V1 records only; his primary points at alice.sol, which he does not own: stale.
  sns.setRecordV1("dave.sol", "ETH", hex("0x00000000219ab540356cbb839cbe05303d7705fa"));
  sns.setRecordV1("dave.sol", "A", Uint8Array.of(198, 51, 100, 7));
  sns.setRecordV1("dave.sol", "discord", utf8("dave#1234"));
  sns.setPrimary(w.dave, "alice.sol");
  sns.setRecordV2("eve.sol", "url", utf8("https://eve.example"));
  if (options.hostile ?? true) seedSnsHostile(sns);
}

/** The hostile accounts of SNS_HOSTILE. */
export function seedSnsHostile(sns: SnsWriter): void {
  const ns = SNS_PROGRAMS.nameService;
  const root = SNS_PROGRAMS.solRoot;
  const short = new Uint8Array(40);
  short.set(
    encodeNameRegistry({ parent: root, owner: SNS_WALLETS.eve, nameClass: null }, new Uint8Array(0)).subarray(
      0,
      40,
    ),
  );
  const badReverse = new Uint8Array([4, 0, 0, 0, 0xff, 0xfe, 0x61, 0x62]);
  sns.register("huge.sol", SNS_WALLETS.eve);
  const huge = domainKeyOf("huge.sol") as Address;
  const hugeRecord = encodeRecordV2({
    staleness: SNS_WALLETS.eve,
    content: new Uint8Array(MAX_RECORD_CONTENT + 1).fill(0x61),
  });
  sns.writeRaw([
    { address: SNS_HOSTILE.short, owner: ns, data: short },
    {
      address: SNS_HOSTILE.unknownClass,
      owner: ns,
      data: encodeNameRegistry(
        { parent: root, owner: SNS_WALLETS.eve, nameClass: snsWallet("some-class") },
        new Uint8Array(0),
      ),
    },
    {
      address: reverseKeyOf(SNS_HOSTILE.unknownClass, null),
      owner: ns,
      data: encodeNameRegistry(
        { parent: null, owner: SNS_PROGRAMS.reverseClass, nameClass: SNS_PROGRAMS.reverseClass },
        encodeReverse("weird-class"),
      ),
    },
    {
      address: SNS_HOSTILE.badUtf8,
      owner: ns,
      data: encodeNameRegistry({ parent: root, owner: SNS_WALLETS.eve, nameClass: null }, new Uint8Array(0)),
    },
    {
      address: reverseKeyOf(SNS_HOSTILE.badUtf8, null),
      owner: ns,
      data: encodeNameRegistry(
        { parent: null, owner: SNS_PROGRAMS.reverseClass, nameClass: SNS_PROGRAMS.reverseClass },
        badReverse,
      ),
    },
    {
      address: SNS_HOSTILE.overlongRecord,
      owner: ns,
      data: encodeNameRegistry(
        { parent: huge, owner: SNS_WALLETS.eve, nameClass: RECORDS_V2_CLASS },
        hugeRecord,
      ),
    },
  ]);
}

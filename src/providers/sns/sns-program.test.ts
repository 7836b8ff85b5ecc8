import { type Address, getAddressEncoder, getProgramDerivedAddress } from "@solana/kit";
import { describe, expect, it } from "vitest";
import {
  decodeNameRegistry,
  decodeRecordV2,
  decodeReverse,
  encodeNameRegistry,
  encodeRecordV2,
  encodeReverse,
  findPda,
  hashedName,
  MAX_RECORD_CONTENT,
  SNS_PROGRAMS,
} from "./sns-program.js";
import { canonicalKeyOf, decodeRecordV1Content, decodeRecordV2Content } from "./sns-records.js";

const enc = getAddressEncoder();
const OWNER = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" as Address;

describe("findPda", () => {
  it.each(["bonfida", "alice", "\0sub", "\x02SOL", "a-much-longer-label-with-many-characters"])(
    "derives what @solana/kit's getProgramDerivedAddress derives (%j)",
    async (label) => {
      const seeds = [hashedName(label), new Uint8Array(32), new Uint8Array(enc.encode(SNS_PROGRAMS.solRoot))];
      const [kit] = await getProgramDerivedAddress({ programAddress: SNS_PROGRAMS.nameService, seeds });
      expect(findPda(seeds, SNS_PROGRAMS.nameService)).toBe(kit);
    },
  );

  it("answers a derivation asked again (kept by program and seeds) as it did the first time", async () => {
    const root = new Uint8Array(enc.encode(SNS_PROGRAMS.solRoot));
    for (const label of ["carol", "dave"]) {
      // Seeds in views at an offset of a larger buffer: the key is their bytes, not their buffer.
      const backing = new Uint8Array(100);
      backing.set(hashedName(label), 4);
      const seeds = [backing.subarray(4, 36), new Uint8Array(32), root];
      const [kit] = await getProgramDerivedAddress({ programAddress: SNS_PROGRAMS.nameService, seeds });
      expect(findPda(seeds, SNS_PROGRAMS.nameService)).toBe(kit);
      expect(findPda([hashedName(label), new Uint8Array(32), root], SNS_PROGRAMS.nameService)).toBe(kit);
      const [other] = await getProgramDerivedAddress({ programAddress: SNS_PROGRAMS.records, seeds });
      expect(findPda(seeds, SNS_PROGRAMS.records)).toBe(other);
    }
  });

  it("gives bonfida.sol's mainnet account", () => {
    const seeds = [
      hashedName("bonfida"),
      new Uint8Array(32),
      new Uint8Array(enc.encode(SNS_PROGRAMS.solRoot)),
    ];
    expect(findPda(seeds, SNS_PROGRAMS.nameService)).toBe("Crf8hzfthWGbGbLTVCiqRqV5MVnbpHB1L9KQMd6gsinb");
  });
});

describe("account layouts", () => {
  it("round-trips a name registry header, and refuses data shorter than it", () => {
    const bytes = encodeNameRegistry(
      { parent: SNS_PROGRAMS.solRoot, owner: OWNER, nameClass: null },
      Uint8Array.of(1, 2),
    );
    expect(decodeNameRegistry(bytes)).toMatchObject({ parent: SNS_PROGRAMS.solRoot, owner: OWNER });
    expect(decodeNameRegistry(bytes.subarray(0, 95))).toHaveProperty("error");
  });

  it.each([
    ["a label", encodeReverse("alice"), "alice"],
    ["a subdomain's label (leading NUL dropped)", encodeReverse("\0pay"), "pay"],
    ["no length prefix", Uint8Array.of(1, 0), null],
    ["a length past the data", Uint8Array.of(9, 0, 0, 0, 0x61), null],
    ["invalid UTF-8", Uint8Array.of(2, 0, 0, 0, 0xff, 0xfe), null],
  ])("reads a reverse account: %s", (_label, data, expected) => {
    const r = decodeReverse(data);
    expect(typeof r === "string" ? r : null).toBe(expected);
  });

  it.each([
    ["a fresh record", encodeRecordV2({ staleness: OWNER, content: Uint8Array.of(0x61) }), "a"],
    ["a record with no staleness id", encodeRecordV2({ staleness: null, content: Uint8Array.of(0x62) }), "b"],
    ["a header alone", Uint8Array.of(1, 0, 0), null],
    ["an unknown validation", Uint8Array.of(9, 0, 0, 0, 0, 0, 0, 0), null],
    ["content shorter than announced", Uint8Array.of(0, 0, 0, 0, 10, 0, 0, 0, 0x61), null],
    [
      "content over the limit",
      encodeRecordV2({ staleness: null, content: new Uint8Array(MAX_RECORD_CONTENT + 1) }),
      null,
    ],
  ])("reads a Records V2 account: %s", (_label, data, expected) => {
    const r = decodeRecordV2(data);
    expect("error" in r ? null : Buffer.from(r.content).toString()).toBe(expected);
  });
});

describe("record contents", () => {
  it.each([
    ["SOL", enc.encode(OWNER), OWNER],
    [
      "ETH",
      Buffer.from("8ba1f109551bd432803012645ac136ddd64dba72", "hex"),
      "0x8ba1f109551bd432803012645ac136ddd64dba72",
    ],
    ["A", Uint8Array.of(192, 0, 2, 1), "192.0.2.1"],
    ["AAAA", Buffer.from("20010db8000000000000000000000001", "hex"), "2001:db8::1"],
    ["url", Buffer.from("https://x.example"), "https://x.example"],
    ["ETH", Uint8Array.of(1, 2), null],
    ["url", Uint8Array.of(0xff), null],
    ["INJ", new Uint8Array(20), null],
  ])("V2 %s", (record, content, expected) => {
    expect(decodeRecordV2Content(record, new Uint8Array(content))).toBe(expected);
  });

  it.each([
    ["IPFS", Buffer.from("QmX\0\0\0"), "QmX"],
    [
      "ETH",
      Buffer.from("00000000219ab540356cbb839cbe05303d7705fa", "hex"),
      "0x00000000219ab540356cbb839cbe05303d7705fa",
    ],
    ["A", Uint8Array.of(10, 0, 0, 1), "10.0.0.1"],
    ["SOL", new Uint8Array(96).fill(1), null],
    ["url", new Uint8Array(8), null],
  ])("V1 %s", (record, data, expected) => {
    expect(decodeRecordV1Content(record, new Uint8Array(data))).toBe(expected);
  });

  it.each([
    ["SOL", "token.SOL.0"],
    ["url", "redirect.WEBSITE.0"],
    ["twitter", "social.TWITTER.0"],
    ["IPFS", "content.IPFS.0"],
    ["unknown", "unknown"],
  ])("maps %s onto %s", (record, key) => {
    expect(canonicalKeyOf(record)).toBe(key);
  });
});

import { hexToBigInt, toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { buildLog } from "../build-log.testing.js";
import { fnsTokenId, namehash } from "../namehash.js";
import type { RawLog } from "../provider.js";
import { FNS_MAINNET, FNS_TOPICS, fnsAdapter } from "./fns.adapter.js";

const REGISTRY = "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65";
const CONTRACTS = { addresses: { registry: REGISTRY }, startBlock: 0 };
const ALICE = "0x00000000000000000000000000000000000a11ce";
const ZERO = "0x0000000000000000000000000000000000000000";

const SIG = {
  Transfer: "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  NewURI: "event NewURI(uint256 indexed tokenId, string uri)",
  SetRecord:
    "event SetRecord(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value)",
  NewKey: "event NewKey(uint256 indexed tokenId, string indexed keyIndex, string key)",
  ResetRecords: "event ResetRecords(uint256 indexed tokenId)",
  SetReverse: "event SetReverse(address indexed addr, uint256 indexed tokenId)",
  RemoveReverse: "event RemoveReverse(address indexed addr)",
  Set: "event Set(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value)",
  SetExpiry: "event SetExpiry(uint256 indexed tokenId, uint64 expiry)",
};

const CEDERICO = fnsTokenId("cederico.metaverse");
const cedericoId = hexToBigInt(CEDERICO);
const log = (sig: string, args: Record<string, unknown>, address = REGISTRY): RawLog =>
  buildLog(sig, args, address);

describe("FNS event topics", () => {
  // Values copied from docs/chain-facts.md; each must also be keccak256 of its exact signature.
  it.each([
    ["Transfer", "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"],
    ["NewURI", "0xc5beef08f693b11c316c0c8394a377a0033c9cf701b8cd8afd79cecef60c3952"],
    ["SetRecord", "0x0a7ae1cb64eb8d41af8aaee78f12a607071ab429d4cb7c764b43cb10e4b3e373"],
    ["ResetRecords", "0x185c30856dadb58bf097c1f665a52ada7029752dbcad008ea3fefc73bee8c9fe"],
    ["SetReverse", "0xeb76a21470988c474a21f690cc28fee1ed511bd812dc3c21fd0f49c5e5d4708a"],
    ["RemoveReverse", "0xfcf5eec0cfa3e6332f5f0e63ec242d71f866a61d121d6cdf5c2eb3b668a26c4f"],
  ] as const)("%s = %s", (name, topic) => {
    expect(FNS_TOPICS[name]).toBe(topic);
    expect(toEventSelector(SIG[name])).toBe(topic);
  });

  it("NewKey = the value of docs/chain-facts.md", () => {
    expect(toEventSelector(SIG.NewKey)).toBe(
      "0x7ae4f661958fbecc2f77be6b0eb280d2a6f604b29e1e7221c82b9da0c4af7f86",
    );
  });
});

describe("fnsAdapter.decode", () => {
  it.each([
    [
      "a mint",
      log(SIG.Transfer, { from: ZERO, to: ALICE, tokenId: cedericoId }),
      [{ type: "transfer", tokenId: CEDERICO, from: ZERO, to: ALICE }],
    ],
    [
      "a NewURI checked with the Freename token id",
      log(SIG.NewURI, { tokenId: cedericoId, uri: "cederico.metaverse" }),
      [{ type: "name", tokenId: CEDERICO, name: "cederico.metaverse" }],
    ],
    [
      "a TLD NewURI",
      log(SIG.NewURI, { tokenId: hexToBigInt(fnsTokenId("metaverse")), uri: "metaverse" }),
      [{ type: "name", tokenId: fnsTokenId("metaverse"), name: "metaverse" }],
    ],
    [
      "a Unicode NewURI hashed over punycode",
      log(SIG.NewURI, { tokenId: hexToBigInt(fnsTokenId("xn--caf-dma.metaverse")), uri: "café.metaverse" }),
      [{ type: "name", tokenId: fnsTokenId("xn--caf-dma.metaverse"), name: "café.metaverse" }],
    ],
    [
      "a SetRecord with a canonical key",
      log(SIG.SetRecord, {
        tokenId: cedericoId,
        keyIndex: "token.ETH.0",
        valueIndex: ALICE,
        key: "token.ETH.0",
        value: ALICE,
      }),
      [{ type: "record", tokenId: CEDERICO, nativeKey: "token.ETH.0", nativeValue: ALICE }],
    ],
    ["NewKey (a no-op)", log(SIG.NewKey, { tokenId: cedericoId, keyIndex: "k", key: "k" }), []],
    [
      "ResetRecords",
      log(SIG.ResetRecords, { tokenId: cedericoId }),
      [{ type: "records-reset", tokenId: CEDERICO }],
    ],
    [
      "SetReverse",
      log(SIG.SetReverse, { addr: ALICE, tokenId: cedericoId }),
      [{ type: "reverse-set", address: ALICE, tokenId: CEDERICO }],
    ],
    ["RemoveReverse", log(SIG.RemoveReverse, { addr: ALICE }), [{ type: "reverse-removed", address: ALICE }]],
  ])("decodes %s", (_, raw, events) => {
    expect(fnsAdapter.decode(raw, CONTRACTS)).toEqual({ ok: true, events });
  });

  it.each([
    [
      "a NewURI whose token id is the UNS namehash, not Freename's",
      log(SIG.NewURI, { tokenId: BigInt(namehash("cederico.metaverse")), uri: "cederico.metaverse" }),
      /does not hash/,
    ],
    [
      "a NewURI naming another token",
      log(SIG.NewURI, { tokenId: cedericoId, uri: "other.metaverse" }),
      /does not hash/,
    ],
    [
      "a UNS Set (FNS records are SetRecord)",
      log(SIG.Set, { tokenId: cedericoId, keyIndex: "k", valueIndex: "v", key: "k", value: "v" }),
      /unknown event topic/,
    ],
    [
      "a SetExpiry (UNS only)",
      log(SIG.SetExpiry, { tokenId: cedericoId, expiry: 1n }),
      /unknown event topic/,
    ],
    [
      "a UNS registry log on the same chain",
      log(SIG.Transfer, { from: ZERO, to: ALICE, tokenId: 1n }, "0xa9a6a3626993d487d2dbda3173cf58ca1a9d9e9f"),
      /unexpected contract/,
    ],
    [
      "a SetRecord with a NUL in the key",
      log(SIG.SetRecord, {
        tokenId: cedericoId,
        keyIndex: "k\u0000",
        valueIndex: "v",
        key: "k\u0000",
        value: "v",
      }),
      /NUL/,
    ],
  ])("refuses %s", (_, raw, reason) => {
    const r = fnsAdapter.decode(raw, CONTRACTS);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });
});

describe("fnsAdapter", () => {
  it("maps native keys by identity (they are already canonical)", () => {
    for (const key of [
      "token.ETH.0",
      "redirect.WEBSITE.0",
      "record.A.0",
      "profile.OWNER.fullname",
      "custom.key",
    ]) {
      expect(fnsAdapter.mapRecord(key, "v")).toEqual([{ key, value: "v" }]);
    }
    expect(fnsAdapter.mapRecord("token.ETH.0", "")).toEqual([]);
  });

  it("derives token ids with Freename's scheme", () => {
    expect(hexToBigInt(fnsAdapter.tokenIdOf("cederico.metaverse"))).toBe(
      27852860280769187492768842851433555806350745604062440243777647496936527137670n,
    );
  });

  it("filters the registry for the map-changing events", () => {
    expect(fnsAdapter.filters(CONTRACTS)).toEqual([
      { address: [REGISTRY], topic0: Object.values(FNS_TOPICS) },
    ]);
    expect(fnsAdapter.filters({ addresses: {}, startBlock: 0 })).toEqual([]);
  });

  it("exports the mainnet registry on each network with an unknown (0) start block", () => {
    expect(Object.keys(FNS_MAINNET)).toEqual(["POLYGON", "BSC", "AURORA"]);
    for (const c of Object.values(FNS_MAINNET))
      expect(c).toEqual({ addresses: { registry: REGISTRY }, startBlock: 0 });
  });
});

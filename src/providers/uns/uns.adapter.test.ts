import { toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { buildLog, hex32 } from "../build-log.testing.js";
import { namehash } from "../namehash.js";
import type { RawLog } from "../provider.js";
import { FNS_SET_RECORD, UNS_TOPICS } from "./uns-events.js";
import { UNS_MAINNET, unsAdapter } from "./uns.adapter.js";

const REGISTRY = "0x049aba7510f45ba5b64ea9e658e342f904db358d";
const CONTRACTS = { addresses: { registry: REGISTRY }, startBlock: 0 };
const ALICE = "0x00000000000000000000000000000000000a11ce";
const BOB = "0x0000000000000000000000000000000000000b0b";
const ZERO = "0x0000000000000000000000000000000000000000";

const SIG = {
  Transfer: "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  NewURI: "event NewURI(uint256 indexed tokenId, string uri)",
  Set: "event Set(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value)",
  NewKey: "event NewKey(uint256 indexed tokenId, string indexed keyIndex, string key)",
  ResetRecords: "event ResetRecords(uint256 indexed tokenId)",
  SetReverse: "event SetReverse(address indexed addr, uint256 indexed tokenId)",
  RemoveReverse: "event RemoveReverse(address indexed addr)",
  SetExpiry: "event SetExpiry(uint256 indexed tokenId, uint64 expiry)",
  SetRecord:
    "event SetRecord(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value)",
};

const BRAD = namehash("brad.crypto");
const bradId = BigInt(BRAD);

function log(sig: string, args: Record<string, unknown>, address = REGISTRY): RawLog {
  return buildLog(sig, args, address);
}

describe("UNS event topics", () => {
  // Values copied from docs/chain-facts.md; each must also be keccak256 of its exact signature.
  it.each([
    ["Transfer", "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"],
    ["NewURI", "0xc5beef08f693b11c316c0c8394a377a0033c9cf701b8cd8afd79cecef60c3952"],
    ["Set", "0x851ffe8e74d5015261dba0a1f9e1b0e5d42c5af5d2ad1908fee897c7d80a0d92"],
    ["NewKey", "0x7ae4f661958fbecc2f77be6b0eb280d2a6f604b29e1e7221c82b9da0c4af7f86"],
    ["ResetRecords", "0x185c30856dadb58bf097c1f665a52ada7029752dbcad008ea3fefc73bee8c9fe"],
    ["SetReverse", "0xeb76a21470988c474a21f690cc28fee1ed511bd812dc3c21fd0f49c5e5d4708a"],
    ["RemoveReverse", "0xfcf5eec0cfa3e6332f5f0e63ec242d71f866a61d121d6cdf5c2eb3b668a26c4f"],
    ["SetExpiry", "0x93feabb03ab84f47fc85bf0c298103fca21d8c8bc376eae0c1e1c56b9d4f7789"],
  ] as const)("%s = %s", (name, topic) => {
    expect(UNS_TOPICS[name]).toBe(topic);
    expect(toEventSelector(SIG[name])).toBe(topic);
  });

  it("FNS SetRecord has its own topic", () => {
    expect(toEventSelector(SIG.SetRecord)).toBe(
      "0x0a7ae1cb64eb8d41af8aaee78f12a607071ab429d4cb7c764b43cb10e4b3e373",
    );
    expect(FNS_SET_RECORD).toBe(toEventSelector(SIG.SetRecord));
  });
});

describe("unsAdapter.decode", () => {
  it.each([
    [
      "a mint (the registry becomes the token's resolver, as UNSRegistry.resolverOf says)",
      log(SIG.Transfer, { from: ZERO, to: ALICE, tokenId: bradId }),
      [
        { type: "transfer", tokenId: BRAD, from: ZERO, to: ALICE },
        { type: "resolver", tokenId: BRAD, resolver: REGISTRY },
      ],
    ],
    [
      "a transfer",
      log(SIG.Transfer, { from: ALICE, to: BOB, tokenId: bradId }),
      [{ type: "transfer", tokenId: BRAD, from: ALICE, to: BOB }],
    ],
    [
      "a checked NewURI",
      log(SIG.NewURI, { tokenId: bradId, uri: "brad.crypto" }),
      [{ type: "name", tokenId: BRAD, name: "brad.crypto" }],
    ],
    [
      "a TLD NewURI (the root as parent: not a name, see tree)",
      log(SIG.NewURI, { tokenId: BigInt(namehash("crypto")), uri: "crypto" }),
      [{ type: "name", tokenId: namehash("crypto"), name: "crypto", parentTokenId: `0x${"0".repeat(64)}` }],
    ],
    [
      "a NewURI in upper case, hashed as published",
      log(SIG.NewURI, { tokenId: BigInt(namehash("Brad.crypto")), uri: "Brad.crypto" }),
      [{ type: "name", tokenId: namehash("Brad.crypto"), name: "brad.crypto" }],
    ],
    [
      "a Set",
      log(SIG.Set, {
        tokenId: bradId,
        keyIndex: "crypto.ETH.address",
        valueIndex: ALICE,
        key: "crypto.ETH.address",
        value: ALICE,
      }),
      [{ type: "record", tokenId: BRAD, nativeKey: "crypto.ETH.address", nativeValue: ALICE }],
    ],
    [
      "a Set to empty (a deletion)",
      log(SIG.Set, { tokenId: bradId, keyIndex: "k", valueIndex: "", key: "k", value: "" }),
      [{ type: "record", tokenId: BRAD, nativeKey: "k", nativeValue: "" }],
    ],
    ["NewKey (a no-op)", log(SIG.NewKey, { tokenId: bradId, keyIndex: "k", key: "k" }), []],
    ["ResetRecords", log(SIG.ResetRecords, { tokenId: bradId }), [{ type: "records-reset", tokenId: BRAD }]],
    [
      "SetReverse",
      log(SIG.SetReverse, { addr: ALICE, tokenId: bradId }),
      [{ type: "reverse-set", address: ALICE, tokenId: BRAD }],
    ],
    ["RemoveReverse", log(SIG.RemoveReverse, { addr: ALICE }), [{ type: "reverse-removed", address: ALICE }]],
    [
      "SetExpiry",
      log(SIG.SetExpiry, { tokenId: bradId, expiry: 1_900_000_000n }),
      [{ type: "expiry", tokenId: BRAD, expiresAt: 1_900_000_000 }],
    ],
  ])("decodes %s", (_, raw, events) => {
    expect(unsAdapter.decode(raw, CONTRACTS)).toEqual({ ok: true, events });
  });

  it("lower-cases addresses of checksummed topics", () => {
    const raw = log(SIG.SetReverse, { addr: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045", tokenId: bradId });
    const r = unsAdapter.decode(raw, CONTRACTS);
    expect(r.ok && r.events[0]).toMatchObject({ address: "0xd8da6bf26964af9d7eed9e03e53415d37aa96045" });
  });

  it.each([
    [
      "a NewURI whose name does not hash to the token",
      log(SIG.NewURI, { tokenId: bradId, uri: "evil.crypto" }),
      /does not hash/,
    ],
    [
      "a NewURI with a NUL byte",
      log(SIG.NewURI, { tokenId: BigInt(namehash("a\u0000.crypto")), uri: "a\u0000.crypto" }),
      /normalization/,
    ],
    [
      "a NewURI with white space",
      log(SIG.NewURI, { tokenId: BigInt(namehash("a b.crypto")), uri: "a b.crypto" }),
      /normalization/,
    ],
    ["an empty NewURI", log(SIG.NewURI, { tokenId: 0n, uri: "" }), /normalization/],
    [
      "an ERC-20 Transfer (3 topics)",
      {
        ...log(SIG.Transfer, { from: ALICE, to: BOB, tokenId: 1n }),
        topics: log(SIG.Transfer, { from: ALICE, to: BOB, tokenId: 1n }).topics.slice(0, 3),
      },
      /token id/,
    ],
    [
      "FNS SetRecord",
      log(SIG.SetRecord, { tokenId: bradId, keyIndex: "k", valueIndex: "v", key: "k", value: "v" }),
      /unknown event topic/,
    ],
    [
      "a log of another contract",
      log(
        SIG.Transfer,
        { from: ZERO, to: ALICE, tokenId: bradId },
        "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
      ),
      /unexpected contract/,
    ],
    [
      "a Set with a NUL in its value",
      log(SIG.Set, { tokenId: bradId, keyIndex: "k", valueIndex: "a\u0000b", key: "k", value: "a\u0000b" }),
      /NUL/,
    ],
    [
      "a Set with a 100 KB value",
      log(SIG.Set, { tokenId: bradId, keyIndex: "k", valueIndex: "v", key: "k", value: "v".repeat(100_000) }),
      /longer than/,
    ],
    [
      "a Set with an empty key",
      log(SIG.Set, { tokenId: bradId, keyIndex: "", valueIndex: "v", key: "", value: "v" }),
      /empty record key/,
    ],
    [
      "a SetExpiry above 2^53",
      { ...log(SIG.SetExpiry, { tokenId: bradId, expiry: 0n }), data: `0x${"f".repeat(64)}` as const },
      /malformed/,
    ],
  ])("refuses %s with a reason", (_, raw, reason) => {
    const r = unsAdapter.decode(raw as RawLog, CONTRACTS);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });

  it("refuses truncated or out-of-bounds data without throwing", () => {
    const good = log(SIG.Set, {
      tokenId: bradId,
      keyIndex: "k",
      valueIndex: "v",
      key: "key",
      value: "value",
    });
    const variants: RawLog[] = [];
    // Up to the last byte of the value (5 bytes = 10 hex digits); trailing padding is not required.
    for (let cut = 2; cut < good.data.length - 54; cut += 7)
      variants.push({ ...good, data: good.data.slice(0, cut) as `0x${string}` });
    // Offset pointing far outside the data, and a huge length.
    variants.push({ ...good, data: `0x${"f".repeat(64)}${good.data.slice(66)}` as `0x${string}` });
    variants.push({
      ...good,
      data: `${good.data.slice(0, 130)}${"f".repeat(64)}${good.data.slice(194)}` as `0x${string}`,
    });
    for (const v of variants) expect(unsAdapter.decode(v, CONTRACTS).ok).toBe(false);
  });

  it("never throws on random topics and data", () => {
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const hex = (n: number) => Array.from({ length: n }, () => (rnd() % 16).toString(16)).join("");
    for (const topic0 of Object.values(UNS_TOPICS)) {
      for (let i = 0; i < 200; i++) {
        const topics = [topic0, ...Array.from({ length: rnd() % 4 }, () => `0x${hex(64)}` as const)];
        const raw = {
          ...log(SIG.ResetRecords, { tokenId: 1n }),
          topics,
          data: `0x${hex((rnd() % 12) * 32)}` as const,
        };
        expect(() => unsAdapter.decode(raw as RawLog, CONTRACTS)).not.toThrow();
      }
    }
  });
});

describe("unsAdapter.filters", () => {
  it("asks for the registry's map-changing events only (NewKey is a no-op)", () => {
    const [filter, ...rest] = unsAdapter.filters(CONTRACTS);
    expect(rest).toHaveLength(0);
    expect(filter.address).toEqual([REGISTRY]);
    expect(new Set(filter.topic0)).toEqual(
      new Set([
        UNS_TOPICS.Transfer,
        UNS_TOPICS.NewURI,
        UNS_TOPICS.Set,
        UNS_TOPICS.ResetRecords,
        UNS_TOPICS.SetReverse,
        UNS_TOPICS.RemoveReverse,
        UNS_TOPICS.SetExpiry,
      ]),
    );
  });

  it("has no filter without a registry (an empty address list would mean any address)", () => {
    expect(unsAdapter.filters({ addresses: {}, startBlock: 0 })).toEqual([]);
  });
});

describe("unsAdapter", () => {
  it("derives token ids by namehash", () => {
    expect(unsAdapter.tokenIdOf("crypto")).toBe(
      "0x0f4a10a4f46c288cea365fcf45cccf0e9d901b945b9829ccdb54c10dc3cb7a6f",
    );
    expect(unsAdapter.tokenIdOf("brad.crypto")).toBe(hex32(bradId));
  });

  it("exports the mainnet registries of docs/chain-facts.md", () => {
    expect(UNS_MAINNET.ETHEREUM).toEqual({
      addresses: {
        registry: REGISTRY,
        cnsRegistry: "0xd1e5b0ff1287aa9f9a268759062e4ab08b9dacbe",
        cnsResolver: "0xb66dce2da6afaaa98f2013446dbcb0f4b0ab2842",
        "cnsResolver:legacy-a1ca": "0xa1cac442be6673c49f8e74ffc7c4fd746f3cbd0d",
        "cnsResolver:legacy-878b": "0x878bc2f3f717766ab69c0a5f9a6144931e61aed3",
      },
      startBlock: 9_082_251,
    });
    expect(UNS_MAINNET.POLYGON).toEqual({
      addresses: { registry: "0xa9a6a3626993d487d2dbda3173cf58ca1a9d9e9f" },
      startBlock: 19_345_077,
    });
  });
});

describe("unsAdapter.tree", () => {
  it("takes TLD tokens (parent = root) for bookkeeping and every other token for a name", () => {
    const root = `0x${"0".repeat(64)}`;
    expect(unsAdapter.tree?.isNameToken?.({ tokenId: namehash("crypto"), parentTokenId: root })).toBe(false);
    expect(unsAdapter.tree?.isNameToken?.({ tokenId: namehash("brad.crypto"), parentTokenId: null })).toBe(
      true,
    );
  });

  it("hashes a Unicode name in its punycode form, as the MintingManager mints it", () => {
    expect(unsAdapter.tokenIdOf("café.wallet")).toBe(namehash("xn--caf-dma.wallet"));
    expect(unsAdapter.tokenIdOf("xn--caf-dma.wallet")).toBe(namehash("xn--caf-dma.wallet"));
  });
});

describe("unsAdapter: the legacy CNS on ETHEREUM", () => {
  const CNS = "0xd1e5b0ff1287aa9f9a268759062e4ab08b9dacbe";
  const RESOLVER = "0xb66dce2da6afaaa98f2013446dbcb0f4b0ab2842";
  const WITH_CNS = {
    addresses: { registry: REGISTRY, cnsRegistry: CNS, cnsResolver: RESOLVER },
    startBlock: 0,
  };
  const RESOLVE = "event Resolve(uint256 indexed tokenId, address indexed to)";

  it("lists the mainnet CNS registry and resolvers, the source starting at the CNS deployment", () => {
    expect(UNS_MAINNET.ETHEREUM.addresses.cnsRegistry).toBe(CNS);
    expect(UNS_MAINNET.ETHEREUM.addresses.cnsResolver).toBe(RESOLVER);
    expect(UNS_MAINNET.ETHEREUM.startBlock).toBe(9_082_251);
    expect(toEventSelector(RESOLVE)).toBe(
      "0xb1b34e6d89e1c584527d447f4b29ffad55635a37edeeb564939a6483401b31a5",
    );
  });

  it("fetches the CNS registry's Transfer/NewURI/Resolve and the resolvers' Set/ResetRecords", () => {
    const filters = unsAdapter.filters(WITH_CNS);
    expect(filters.map((f) => f.address)).toEqual([[REGISTRY], [CNS], [RESOLVER]]);
    expect(filters[1].topic0).toContain(toEventSelector(RESOLVE));
    expect(filters[2].topic0).toEqual([UNS_TOPICS.Set, UNS_TOPICS.ResetRecords]);
  });

  it.each([
    [
      "a CNS mint: no resolver yet (Resolve follows)",
      log(SIG.Transfer, { from: ZERO, to: ALICE, tokenId: bradId }, CNS),
      [{ type: "transfer", tokenId: BRAD, from: ZERO, to: ALICE }],
    ],
    [
      "a CNS transfer: the registry drops the resolver",
      log(SIG.Transfer, { from: ALICE, to: BOB, tokenId: bradId }, CNS),
      [
        { type: "transfer", tokenId: BRAD, from: ALICE, to: BOB },
        { type: "resolver", tokenId: BRAD, resolver: ZERO },
      ],
    ],
    [
      "a CNS burn",
      log(SIG.Transfer, { from: ALICE, to: ZERO, tokenId: bradId }, CNS),
      [{ type: "transfer", tokenId: BRAD, from: ALICE, to: ZERO }],
    ],
    [
      "a CNS NewURI",
      log(SIG.NewURI, { tokenId: bradId, uri: "brad.crypto" }, CNS),
      [{ type: "name", tokenId: BRAD, name: "brad.crypto" }],
    ],
    [
      "Resolve",
      log(RESOLVE, { tokenId: bradId, to: RESOLVER }, CNS),
      [{ type: "resolver", tokenId: BRAD, resolver: RESOLVER }],
    ],
    [
      "a resolver Set",
      log(SIG.Set, { tokenId: bradId, keyIndex: "k", valueIndex: "v", key: "k", value: "v" }, RESOLVER),
      [{ type: "record", tokenId: BRAD, nativeKey: "k", nativeValue: "v" }],
    ],
    [
      "a resolver ResetRecords",
      log(SIG.ResetRecords, { tokenId: bradId }, RESOLVER),
      [{ type: "records-reset", tokenId: BRAD }],
    ],
  ])("decodes %s", (_, raw, events) => {
    expect(unsAdapter.decode(raw, WITH_CNS)).toEqual({ ok: true, events });
  });

  it("refuses UNS-only events from the CNS contracts", () => {
    const reverse = log(SIG.SetReverse, { addr: ALICE, tokenId: bradId }, CNS);
    expect(unsAdapter.decode(reverse, WITH_CNS).ok).toBe(false);
    const transfer = log(SIG.Transfer, { from: ZERO, to: ALICE, tokenId: bradId }, RESOLVER);
    expect(unsAdapter.decode(transfer, WITH_CNS).ok).toBe(false);
  });
});

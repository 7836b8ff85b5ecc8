import { describe, expect, it } from "vitest";
import type { DomainWithRecords } from "../domain/types.js";
import type { RankedDomain } from "./rank.js";
import { buildRecordsMap, compareRecordKeys, shapeRecord } from "./record-shape.js";

describe("compareRecordKeys", () => {
  it.each([
    ["record.A.2", "record.A.10", -1],
    ["record.A.10", "record.A.2", 1],
    ["record.A.0", "record.A.0", 0],
    ["record.A.9", "record.AAAA.0", -1],
    ["record.A.1", "record.A.01", -1],
    ["token.ETH.0", "token.ETH.0.extra", -1],
    ["profile.OWNER.fullname", "profile.OWNER.0", 1],
    ["a.99999999999999999999999", "a.100000000000000000000000", -1],
    ["redirect.WEBSITE.0", "record.TXT.0", 1],
  ])("%s vs %s -> %i", (a, b, sign) => {
    expect(Math.sign(compareRecordKeys(a, b))).toBe(sign);
  });
});

// A plain, allocating statement of the order, to check the fast comparator against.
function reference(a: string, b: string): number {
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const [x, y] = [pa[i], pb[i]];
    if (x === y) continue;
    const [xn, yn] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (xn && yn) {
      const d = BigInt(x) - BigInt(y);
      if (d !== 0n) return d < 0n ? -1 : 1;
      return x.length < y.length ? -1 : 1;
    }
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return Math.sign(pa.length - pb.length);
}

describe("compareRecordKeys against the reference order", () => {
  it("agrees on 20,000 random pairs of keys", () => {
    let seed = 11;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const parts = [
      "record",
      "A",
      "AAAA",
      "TXT",
      "0",
      "00",
      "1",
      "2",
      "10",
      "010",
      "99",
      "100",
      "",
      "token",
      "ETH",
      "a",
    ];
    const key = () =>
      Array.from({ length: 1 + Math.floor(rand() * 4) }, () => parts[Math.floor(rand() * parts.length)]).join(
        ".",
      );
    for (let i = 0; i < 20_000; i++) {
      const [a, b] = [key(), key()];
      expect(Math.sign(compareRecordKeys(a, b)), `${a} vs ${b}`).toBe(a === b ? 0 : reference(a, b));
    }
  });
});

describe("buildRecordsMap", () => {
  const rec = (key: string, value = "v") => ({ key, value, nativeKey: key, nativeValue: value });

  it("orders keys with numeric indexes in numeric order", () => {
    const map = buildRecordsMap([
      rec("record.A.10"),
      rec("token.ETH.0"),
      rec("record.A.2"),
      rec("record.A.0"),
    ]);
    expect(Object.keys(map)).toEqual(["record.A.0", "record.A.2", "record.A.10", "token.ETH.0"]);
  });

  it("keeps a chain-supplied __proto__ key as a plain entry", () => {
    const map = buildRecordsMap([rec("__proto__", "x"), rec("constructor", "y")]);
    expect(Object.keys(map)).toEqual(["__proto__", "constructor"]);
    expect(Object.entries(map)).toEqual([
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);
    expect(JSON.stringify(map)).toBe('{"__proto__":"x","constructor":"y"}');
  });

  it("is empty for a domain without records", () => {
    expect(Object.keys(buildRecordsMap([]))).toEqual([]);
  });
});

describe("shapeRecord", () => {
  const domain: DomainWithRecords = {
    id: 7,
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: `0x${"1".padStart(64, "0")}`,
    name: "a.b.wallet",
    sld: "a.b",
    tld: "wallet",
    owner: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    resolver: null,
    registeredAt: 0,
    registeredBlock: 1,
    expiresAt: null,
    lastUpdateBlock: 2,
    lastUpdateAt: Date.UTC(2024, 4, 6, 7, 8, 9, 5),
    baseScore: 71.6,
    spam: false,
    csamOk: true,
    kyc: true,
    tags: [],
    records: [{ key: "token.ETH.0", value: "0xabc", nativeKey: "token.ETH.0", nativeValue: "0xabc" }],
  };
  const ranked: RankedDomain = {
    domain,
    score: 71.6,
    spam: true,
    tags: ["t"],
    details: [{ rule: "base", effect: 71.6, reason: "stored" }],
  };

  it("writes the forward record of the spec", () => {
    expect(shapeRecord(ranked, "forward", false)).toEqual({
      info: {
        sld: "a.b",
        tld: "wallet",
        smartContractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
        lastUpdate: "2024-05-06T07:08:09.005Z",
        CSAMValidation: true,
        KYC: true,
        tags: ["t"],
      },
      records: { "token.ETH.0": "0xabc" },
      domain: "a.b.wallet",
      fullQualifiedDomain: "a.b.wallet",
      network: "POLYGON",
      provider: "NAMESPACE_A",
      ownerAddress: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      score: 72,
      spam: true,
    });
  });

  it("leaves smartContractAddress and scoreDetails out of reverse records", () => {
    const r = shapeRecord(ranked, "reverse", true);
    expect("smartContractAddress" in r.info).toBe(false);
    expect("scoreDetails" in r).toBe(false);
  });

  it("adds scoreDetails with explain and changes nothing else", () => {
    const plain = shapeRecord(ranked, "forward", false);
    const { scoreDetails, ...rest } = shapeRecord(ranked, "forward", true);
    expect(scoreDetails).toEqual(ranked.details);
    expect(rest).toEqual(plain);
  });

  it("clamps scores to integers 0..100 and survives a corrupt time", () => {
    const odd = { ...ranked, score: 140, domain: { ...domain, lastUpdateAt: Number.NaN } };
    const r = shapeRecord(odd, "forward", false);
    expect(r.score).toBe(100);
    expect(r.info.lastUpdate).toBe("1970-01-01T00:00:00.000Z");
    expect(shapeRecord({ ...ranked, score: -3 }, "forward", false).score).toBe(0);
  });
});

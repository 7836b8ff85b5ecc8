import { describe, expect, it } from "vitest";
import type { DomainRecord } from "../domain/types.js";
import { buildDnsName } from "./dns-name.js";
import { buildNodeRRsets, DEFAULT_TTL, type RRset } from "./resource-records.js";

const recs = (o: Record<string, string>): DomainRecord[] =>
  Object.entries(o).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value }));

/** RRsets with TXT chunks as strings, for readable rows. */
function show(rrsets: RRset[]): Array<{ type: string; ttl: number; data: unknown[] }> {
  return rrsets.map((s) =>
    s.type === "TXT"
      ? {
          type: s.type,
          ttl: s.ttl,
          data: s.data.map((chunks) => chunks.map((c) => c.toString("utf8")).join("")),
        }
      : { type: s.type, ttl: s.ttl, data: s.data },
  );
}

describe("buildNodeRRsets: one row of docs/dns.md each", () => {
  it.each<[string, Record<string, string>, Array<{ type: string; ttl: number; data: unknown[] }>]>([
    [
      "record.A.n -> A",
      { "record.A.0": "10.0.0.1", "record.A.1": "10.0.0.2" },
      [{ type: "A", ttl: DEFAULT_TTL, data: ["10.0.0.1", "10.0.0.2"] }],
    ],
    [
      "record.AAAA.n -> AAAA (one spelling)",
      { "record.AAAA.0": "2001:DB8:0:0::1" },
      [{ type: "AAAA", ttl: DEFAULT_TTL, data: ["2001:db8::1"] }],
    ],
    [
      "record.CNAME.0 -> CNAME",
      { "record.CNAME.0": "Alice.Example." },
      [{ type: "CNAME", ttl: DEFAULT_TTL, data: ["alice.example"] }],
    ],
    [
      "record.TXT.n -> TXT",
      { "record.TXT.0": "v=spf1 -all", "record.TXT.1": "hello" },
      [{ type: "TXT", ttl: DEFAULT_TTL, data: ["v=spf1 -all", "hello"] }],
    ],
    [
      "record.MX.n -> MX",
      { "record.MX.0": "10 mx.alice.eth", "record.MX.1": "0 ." },
      [
        {
          type: "MX",
          ttl: DEFAULT_TTL,
          data: [
            { preference: 10, exchange: "mx.alice.eth" },
            { preference: 0, exchange: "." },
          ],
        },
      ],
    ],
    [
      "record.<TYPE>.ttl -> that RRset's TTL",
      { "record.A.0": "10.0.0.1", "record.A.ttl": "60", "record.TXT.0": "x" },
      [
        { type: "A", ttl: 60, data: ["10.0.0.1"] },
        { type: "TXT", ttl: DEFAULT_TTL, data: ["x"] },
      ],
    ],
    [
      "content.IPFS.n -> TXT dnslink=/ipfs/…",
      { "content.IPFS.0": "QmHash" },
      [{ type: "TXT", ttl: DEFAULT_TTL, data: ["dnslink=/ipfs/QmHash"] }],
    ],
    [
      "content.IPNS.n -> TXT dnslink=/ipns/…",
      { "content.IPNS.0": "k51key" },
      [{ type: "TXT", ttl: DEFAULT_TTL, data: ["dnslink=/ipns/k51key"] }],
    ],
    [
      "redirect.WEBSITE.n -> TXT redirect=<url>",
      { "redirect.WEBSITE.0": "https://alice.example.com" },
      [{ type: "TXT", ttl: DEFAULT_TTL, data: ["redirect=https://alice.example.com"] }],
    ],
    [
      "token.<SYMBOL>.n -> TXT token.<SYMBOL>=<address>",
      { "token.ETH.0": "0xabc" },
      [{ type: "TXT", ttl: DEFAULT_TTL, data: ["token.ETH=0xabc"] }],
    ],
    [
      "token.<SYMBOL>.<VERSION>.n -> TXT token.<SYMBOL>.<VERSION>=<address>",
      { "token.USDT.ERC20.0": "0xdef" },
      [{ type: "TXT", ttl: DEFAULT_TTL, data: ["token.USDT.ERC20=0xdef"] }],
    ],
    [
      "TXT order: record.TXT, then content, redirect, tokens",
      {
        "token.ETH.0": "0x1",
        "record.TXT.0": "t",
        "content.IPFS.0": "Qm",
        "redirect.WEBSITE.0": "https://r",
      },
      [
        {
          type: "TXT",
          ttl: DEFAULT_TTL,
          data: ["t", "dnslink=/ipfs/Qm", "redirect=https://r", "token.ETH=0x1"],
        },
      ],
    ],
    [
      "the same data twice is one record",
      { "record.A.0": "10.0.0.1", "record.A.1": "10.0.0.1" },
      [{ type: "A", ttl: DEFAULT_TTL, data: ["10.0.0.1"] }],
    ],
    ["other keys give no records", { "profile.OWNER.email": "a@b", "social.TWITTER.0": "x" }, []],
    [
      "a CNAME stands alone",
      { "record.CNAME.0": "alias.example", "record.A.0": "10.0.0.1", "token.ETH.0": "0x1" },
      [{ type: "CNAME", ttl: DEFAULT_TTL, data: ["alias.example"] }],
    ],
  ])("%s", (_label, records, expected) => {
    expect(show(buildNodeRRsets(recs(records)).rrsets)).toEqual(expected);
  });

  it.each<[string, Record<string, string>, string, RegExp]>([
    ["an A that is not IPv4", { "record.A.0": "10.0.0.300" }, "record.A.0", /IPv4/],
    ["an AAAA that is not IPv6", { "record.AAAA.0": "10.0.0.1" }, "record.AAAA.0", /IPv6/],
    [
      "a second CNAME",
      { "record.CNAME.0": "a.example", "record.CNAME.1": "b.example" },
      "record.CNAME.1",
      /one CNAME/,
    ],
    ["a CNAME target that is no host name", { "record.CNAME.0": "a b" }, "record.CNAME.0", /host name/],
    ["an MX without preference", { "record.MX.0": "mx.example" }, "record.MX.0", /preference/],
    ["a TTL that is not a number", { "record.A.0": "10.0.0.1", "record.A.ttl": "1h" }, "record.A.ttl", /TTL/],
    ["a type not served", { "record.SRV.0": "0 5 5060 sip.example" }, "record.SRV.0", /not served/],
    [
      "data beside a CNAME",
      { "record.CNAME.0": "a.example", "record.A.0": "10.0.0.1" },
      "record.A.0",
      /beside a CNAME/,
    ],
    ["a TXT over 4096 bytes", { "record.TXT.0": "x".repeat(4097) }, "record.TXT.0", /4096/],
    ["an MX target that is an IPv4 literal", { "record.MX.0": "10 10.0.0.1" }, "record.MX.0", /preference/],
  ])("skips and reports %s", (_label, records, key, reason) => {
    const { skipped } = buildNodeRRsets(recs(records));
    expect(skipped).toContainEqual({ key, reason: expect.stringMatching(reason) });
  });

  it("skips and reports A, AAAA and MX at a name that is no host name; keeps TXT", () => {
    const { rrsets, skipped } = buildNodeRRsets(
      recs({
        "record.A.0": "10.0.0.1",
        "record.AAAA.0": "::1",
        "record.MX.0": "10 mx.example",
        "record.TXT.0": "t",
      }),
      "_srv.alice.wallet",
    );
    expect(show(rrsets)).toEqual([{ type: "TXT", ttl: DEFAULT_TTL, data: ["t"] }]);
    expect(skipped.map((s) => s.key)).toEqual(["record.A.0", "record.AAAA.0", "record.MX.0"]);
  });

  it("splits a TXT value into 255-octet character-strings", () => {
    const [set] = buildNodeRRsets(recs({ "record.TXT.0": "y".repeat(600) })).rrsets;
    expect(set.type === "TXT" && set.data[0].map((c) => c.length)).toEqual([255, 255, 90]);
  });
});

describe("buildDnsName", () => {
  it.each([
    ["alice.wallet", "alice.wallet"],
    ["café.eth", "xn--caf-dma.eth"],
    ["日本.crypto", "xn--wgv71a.crypto"],
    ["_dmarc.alice.wallet", "_dmarc.alice.wallet"],
    ["Alice.Wallet.", "alice.wallet"],
    [`${"a".repeat(63)}.x`, `${"a".repeat(63)}.x`],
  ])("%s -> %s", (input, ascii) => {
    expect(buildDnsName(input)).toEqual({ ok: true, name: ascii });
  });

  it.each([
    ["a label over 63 octets", `${"a".repeat(64)}.x`, /64 octets/],
    ["an IDNA label over 63 octets", `ü${"abcdefghij".repeat(6)}.eth`, /octets \(over 63\)/],
    ["a name over 255 octets", `${"a".repeat(60)}.`.repeat(5) + "x", /over 255/],
    ["a label that is no host-name label", "$dollar.eth", /host-name/],
    ["an unknown ENS label", "[0xabc].eth", /host-name/],
    ["an empty label", "a..eth", /empty/],
  ])("refuses %s", (_label, input, reason) => {
    const r = buildDnsName(input);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });
});

import { describe, expect, it } from "vitest";
import { MAX_DNS_ENTRIES, mapUnsRecord } from "./uns-records.js";

const ETH = "0x8aad44321a86b170879d7a244c1e8d360c99dda8";

describe("mapUnsRecord", () => {
  it.each([
    ["crypto.ETH.address", ETH, [{ key: "token.ETH.0", value: ETH }]],
    ["crypto.btc.address", "bc1qxyz", [{ key: "token.BTC.0", value: "bc1qxyz" }]],
    ["crypto.USDT.version.ERC20.address", ETH, [{ key: "token.USDT.ERC20.0", value: ETH }]],
    ["crypto.MATIC.version.MATIC.address", ETH, [{ key: "token.MATIC.MATIC.0", value: ETH }]],
    [
      "browser.redirect_url",
      "https://example.com",
      [{ key: "redirect.WEBSITE.0", value: "https://example.com" }],
    ],
    [
      "dns.A",
      '["10.0.0.1","10.0.0.2"]',
      [
        { key: "record.A.0", value: "10.0.0.1" },
        { key: "record.A.1", value: "10.0.0.2" },
      ],
    ],
    ["dns.AAAA", '["::1"]', [{ key: "record.AAAA.0", value: "::1" }]],
    ["dns.A.ttl", "600", [{ key: "record.A.ttl", value: "600" }]],
    ["whois.email.value", "a@b.c", [{ key: "profile.OWNER.email", value: "a@b.c" }]],
    ["social.picture.value", "https://x/p.png", [{ key: "profile.OWNER.avatar", value: "https://x/p.png" }]],
    ["social.twitter.username", "brad", [{ key: "social.TWITTER.0", value: "brad" }]],
    ["social.discord.username", "brad#1", [{ key: "social.DISCORD.0", value: "brad#1" }]],
    ["ipfs.html.value", "QmHash", [{ key: "content.IPFS.0", value: "QmHash" }]],
    ["dweb.ipfs.hash", "QmHash", [{ key: "content.IPFS.0", value: "QmHash" }]],
    ["dweb.bzz.hash", "abcd", [{ key: "content.SWARM.0", value: "abcd" }]],
    ["dweb.arweave.hash", "tx", [{ key: "content.ARWEAVE.0", value: "tx" }]],
  ])("maps %s", (key, value, expected) => {
    expect(mapUnsRecord(key, value)).toEqual(expected);
  });

  it.each([
    ["an unknown key", "ipfs.redirect_domain.value", "x.com"],
    ["dns.ttl (the zone default)", "dns.ttl", "300"],
    ["dns.A that is not JSON", "dns.A", "10.0.0.1"],
    ["dns.A that is a JSON object", "dns.A", '{"a":1}'],
    ["dns.A with a non-string entry", "dns.A", '["10.0.0.1",7]'],
    ["dns.A with a NUL in an entry", "dns.A", '["a\\u0000b"]'],
    [
      "dns.A with too many entries",
      "dns.A",
      JSON.stringify(Array.from({ length: MAX_DNS_ENTRIES + 1 }, () => "10.0.0.1")),
    ],
    ["a TTL that is not an integer", "dns.A.ttl", "10m"],
    ["a TTL above 2^31-1", "dns.A.ttl", "4294967296"],
    ["a symbol that would inject dots", "crypto.E.T.H.address", ETH],
    ["a symbol with odd characters", "crypto.ET$H.address", ETH],
    ["a version key of the wrong shape", "crypto.USDT.version.ERC20.extra.address", ETH],
    ["a 100 KB value under an unknown key", "x", "v".repeat(100_000)],
  ])("keeps %s native", (_, key, value) => {
    expect(mapUnsRecord(key, value)).toEqual([{ key, value }]);
  });

  it("maps an empty value (a deletion) to nothing", () => {
    expect(mapUnsRecord("crypto.ETH.address", "")).toEqual([]);
  });

  it("maps an empty DNS array to no records", () => {
    expect(mapUnsRecord("dns.A", "[]")).toEqual([]);
  });
});

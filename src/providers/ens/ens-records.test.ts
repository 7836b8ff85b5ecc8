import dnsPacket from "dns-packet";
import { bytesToHex } from "viem";
import { describe, expect, it } from "vitest";
import type { Hex } from "../provider.js";
import { MAX_RRSET } from "./dns-wire.js";
import { mapEnsRecord } from "./ens-records.js";

// @types/dns-packet lacks the single-RR codec.
const answer = (dnsPacket as unknown as { answer: { encode(a: unknown): Buffer } }).answer;
const rrs = (...answers: unknown[]): Hex => bytesToHex(Buffer.concat(answers.map((a) => answer.encode(a))));
const rr = (type: string, data: unknown, ttl = 300) => ({ name: "alice.eth", type, ttl, class: "IN", data });

describe("mapEnsRecord", () => {
  it.each([
    [
      "addr.60",
      "0xd8da6bf26964af9d7eed9e03e53415d37aa96045",
      [{ key: "token.ETH.0", value: "0xd8da6bf26964af9d7eed9e03e53415d37aa96045" }],
    ],
    [
      "addr.0",
      "0x76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac",
      [{ key: "token.BTC.0", value: "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa" }],
    ],
    [
      "addr.2147483785 (Polygon, ENSIP-11)",
      "0xd8da6bf26964af9d7eed9e03e53415d37aa96045",
      [{ key: "token.MATIC.0", value: "0xd8da6bf26964af9d7eed9e03e53415d37aa96045" }],
    ],
    [
      "addr.61 (etcLegacy)",
      "0xd8da6bf26964af9d7eed9e03e53415d37aa96045",
      [{ key: "token.ETC.0", value: "0xd8da6bf26964af9d7eed9e03e53415d37aa96045" }],
    ],
    ["text.url", "https://alice.example", [{ key: "redirect.WEBSITE.0", value: "https://alice.example" }]],
    ["text.name", "Alice", [{ key: "profile.OWNER.name", value: "Alice" }]],
    ["text.avatar", "ipfs://Qm", [{ key: "profile.OWNER.avatar", value: "ipfs://Qm" }]],
    ["text.email", "a@b.c", [{ key: "profile.OWNER.email", value: "a@b.c" }]],
    ["text.description", "hi", [{ key: "profile.OWNER.description", value: "hi" }]],
    ["text.com.twitter", "alice", [{ key: "social.TWITTER.0", value: "alice" }]],
    ["text.com.github", "alice", [{ key: "social.GITHUB.0", value: "alice" }]],
    ["text.org.telegram", "alice", [{ key: "social.TELEGRAM.0", value: "alice" }]],
    [
      "contenthash",
      "0xe3010170122029f2d17be6139079dc48696d1f582a8530eb9805b561eda517e22a892c7e3f1f",
      [{ key: "content.IPFS.0", value: "QmRAQB6YaCyidP37UdDnjFY5vQuiBrcqdyoW1CuDgwxkD4" }],
    ],
    [
      "dns.A (two RRs)",
      rrs(rr("A", "10.0.0.1"), rr("A", "10.0.0.2")),
      [
        { key: "record.A.0", value: "10.0.0.1" },
        { key: "record.A.1", value: "10.0.0.2" },
        { key: "record.A.ttl", value: "300" },
      ],
    ],
    [
      "dns.AAAA",
      rrs(rr("AAAA", "2001:db8::1", 60)),
      [
        { key: "record.AAAA.0", value: "2001:db8::1" },
        { key: "record.AAAA.ttl", value: "60" },
      ],
    ],
    [
      "dns.TXT (character-strings joined)",
      rrs(rr("TXT", ["https://alice", ".example"])),
      [
        { key: "record.TXT.0", value: "https://alice.example" },
        { key: "record.TXT.ttl", value: "300" },
      ],
    ],
    [
      "dns.MX",
      rrs(rr("MX", { preference: 10, exchange: "mx.alice.eth" })),
      [
        { key: "record.MX.0", value: "10 mx.alice.eth" },
        { key: "record.MX.ttl", value: "300" },
      ],
    ],
    [
      "dns.CNAME",
      rrs(rr("CNAME", "alice.example")),
      [
        { key: "record.CNAME.0", value: "alice.example" },
        { key: "record.CNAME.ttl", value: "300" },
      ],
    ],
  ])("maps %s", (key, value, expected) => {
    expect(mapEnsRecord(key.split(" ")[0], value)).toEqual(expected);
  });

  it.each([
    ["an unknown text key", "text.keywords", "a,b"],
    ["an unknown coin type", "addr.99999999", "0x1234"],
    ["an unknown EVM chain", `addr.${0x80000000 + 999_999}`, "0xd8da6bf26964af9d7eed9e03e53415d37aa96045"],
    ["a coin type that is not a number", "addr.x", "0x1234"],
    ["address bytes that are not hex", "addr.60", "0xzz"],
    ["BTC bytes that are no script", "addr.0", "0x0102"],
    ["a contenthash of an unknown codec", "contenthash", "0x0101020304"],
    ["a contenthash that is not hex", "contenthash", "Qm…"],
    ["dns of a name below the domain", "dns.www.alice.eth.A", rrs(rr("A", "10.0.0.1"))],
    ["dns wire that is truncated", "dns.A", rrs(rr("A", "10.0.0.1")).slice(0, -4)],
    ["dns wire of another type than the key", "dns.AAAA", rrs(rr("A", "10.0.0.1"))],
    [
      "dns of a type with no rendering",
      "dns.SOA",
      rrs(rr("SOA", { mname: "a", rname: "b", serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 1 })),
    ],
    ["a TXT holding a NUL", "dns.TXT", rrs(rr("TXT", ["a\u0000b"]))],
    [
      "an RRset larger than the cap",
      "dns.A",
      rrs(...Array.from({ length: MAX_RRSET + 1 }, () => rr("A", "10.0.0.1"))),
    ],
    ["a key of no known form", "name", "alice.eth"],
  ])("keeps %s native", (_, key, value) => {
    expect(mapEnsRecord(key, value)).toEqual([{ key, value }]);
  });

  it("maps an empty value (a deletion) to nothing", () => {
    expect(mapEnsRecord("addr.60", "")).toEqual([]);
  });
});

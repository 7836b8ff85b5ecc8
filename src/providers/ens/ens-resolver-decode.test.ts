import { describe, expect, it } from "vitest";
import { reverseNode } from "../namehash.js";
import type { Hex, RawLog } from "../provider.js";
import { A, ALICE, ALICE_ETH, ANY, decode, log, rrs, wire, ZERO } from "./ens.testing.js";
import { ENS_SIGNATURES as S, ENS_TOPICS } from "./ens-topics.js";

type Case = [string, RawLog, unknown[]];
const REV = reverseNode(ALICE);

const A_RRSET = rrs(
  { name: "alice.eth", type: "A", ttl: 300, class: "IN", data: "10.0.0.1" },
  { name: "alice.eth", type: "A", ttl: 300, class: "IN", data: "10.0.0.2" },
);
const rec = (tokenId: Hex, nativeKey: string, nativeValue: string) => [
  { type: "record", tokenId, nativeKey, nativeValue },
];
const resolverCases: Case[] = [
  [
    "AddrChanged",
    log(S.AddrChanged, { node: ALICE_ETH, a: "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045" }, ANY),
    rec(ALICE_ETH, "addr.60", "0xd8da6bf26964af9d7eed9e03e53415d37aa96045"),
  ],
  [
    "AddrChanged to zero (a deletion)",
    log(S.AddrChanged, { node: ALICE_ETH, a: ZERO }, ANY),
    rec(ALICE_ETH, "addr.60", ""),
  ],
  [
    "AddressChanged coin 60",
    log(S.AddressChanged, { node: ALICE_ETH, coinType: 60n, newAddress: ALICE }, ANY),
    rec(ALICE_ETH, "addr.60", ALICE),
  ],
  [
    "AddressChanged coin 0 (BTC script bytes)",
    log(
      S.AddressChanged,
      { node: ALICE_ETH, coinType: 0n, newAddress: "0x76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac" },
      ANY,
    ),
    rec(ALICE_ETH, "addr.0", "0x76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"),
  ],
  [
    "AddressChanged to empty bytes",
    log(S.AddressChanged, { node: ALICE_ETH, coinType: 0n, newAddress: "0x" }, ANY),
    rec(ALICE_ETH, "addr.0", ""),
  ],
  [
    "AddressChanged EVM chain to zero",
    log(S.AddressChanged, { node: ALICE_ETH, coinType: 2147483785n, newAddress: ZERO }, ANY),
    rec(ALICE_ETH, "addr.2147483785", ""),
  ],
  [
    "TextChanged",
    log(
      S.TextChanged,
      { node: ALICE_ETH, indexedKey: "url", key: "url", value: "https://alice.example" },
      ANY,
    ),
    rec(ALICE_ETH, "text.url", "https://alice.example"),
  ],
  [
    "ContenthashChanged",
    log(S.ContenthashChanged, { node: ALICE_ETH, hash: "0xE301017012" }, ANY),
    rec(ALICE_ETH, "contenthash", "0xe301017012"),
  ],
  [
    "ContenthashChanged to empty",
    log(S.ContenthashChanged, { node: ALICE_ETH, hash: "0x" }, ANY),
    rec(ALICE_ETH, "contenthash", ""),
  ],
  [
    "DNSRecordChanged of the domain's own name",
    log(S.DNSRecordChanged, { node: ALICE_ETH, name: wire("alice.eth"), resource: 1, record: A_RRSET }, ANY),
    rec(ALICE_ETH, "dns.A", A_RRSET),
  ],
  [
    "DNSRecordChanged of a name below the domain",
    log(
      S.DNSRecordChanged,
      { node: ALICE_ETH, name: wire("www.alice.eth"), resource: 16, record: "0x00" },
      ANY,
    ),
    rec(ALICE_ETH, "dns.www.alice.eth.TXT", "0x00"),
  ],
  [
    "DNSRecordDeleted",
    log(S.DNSRecordDeleted, { node: ALICE_ETH, name: wire("alice.eth"), resource: 1 }, ANY),
    rec(ALICE_ETH, "dns.A", ""),
  ],
  [
    "DNSRecordChanged of an unnamed type",
    log(S.DNSRecordDeleted, { node: ALICE_ETH, name: wire("alice.eth"), resource: 4242 }, ANY),
    rec(ALICE_ETH, "dns.TYPE4242", ""),
  ],
  [
    "VersionChanged",
    log(S.VersionChanged, { node: ALICE_ETH, newVersion: 3n }, ANY),
    [{ type: "records-reset", tokenId: ALICE_ETH }],
  ],
];

describe("ensAdapter.decode: resolver events (any address)", () => {
  it.each(resolverCases)("decodes %s", (_, raw, events) => {
    expect(decode(raw)).toEqual({ ok: true, events });
  });

  const bad: Array<[string, RawLog, RegExp]> = [
    [
      "a legacy TextChanged (no value)",
      log(S.LegacyTextChanged, { node: ALICE_ETH, indexedKey: "url", key: "url" }, ANY),
      /no value/,
    ],
    [
      "a TextChanged whose key does not match its topic",
      {
        ...log(S.TextChanged, { node: ALICE_ETH, indexedKey: "url", key: "url", value: "v" }, ANY),
        topics: log(S.TextChanged, { node: ALICE_ETH, indexedKey: "avatar", key: "url", value: "v" }, ANY)
          .topics,
      },
      /does not match/,
    ],
    [
      "a TextChanged with a 100 KB value",
      log(S.TextChanged, { node: ALICE_ETH, indexedKey: "k", key: "k", value: "x".repeat(100_000) }, ANY),
      /longer than/,
    ],
    [
      "a TextChanged with a NUL in the key",
      log(S.TextChanged, { node: ALICE_ETH, indexedKey: "k\u0000", key: "k\u0000", value: "v" }, ANY),
      /NUL/,
    ],
    [
      "a NameChanged that fails normalization",
      log(S.NameChanged, { node: REV, name: "a b.eth" }, ANY),
      /normalization/,
    ],
    [
      "a DNS record event with a root owner name",
      log(S.DNSRecordDeleted, { node: ALICE_ETH, name: "0x00", resource: 1 }, ANY),
      /wire-format/,
    ],
  ];
  it.each(bad)("refuses %s with a reason", (_, raw, reason) => {
    const r = decode(raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });

  it("never throws on random topics and data", () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const hex = (n: number) => Array.from({ length: n }, () => (rnd() % 16).toString(16)).join("");
    const addresses = [...Object.values(A), ANY];
    const base = log(S.VersionChanged, { node: ALICE_ETH, newVersion: 1n }, ANY);
    for (const topic0 of Object.values(ENS_TOPICS)) {
      for (let i = 0; i < 150; i++) {
        const topics = [topic0, ...Array.from({ length: rnd() % 5 }, () => `0x${hex(64)}` as const)];
        // Small offsets/lengths appear often enough to reach the dynamic readers.
        const words = Array.from({ length: rnd() % 8 }, () =>
          rnd() % 3 === 0 ? `${"0".repeat(62)}${hex(2)}` : hex(64),
        );
        const raw: RawLog = {
          ...base,
          address: addresses[rnd() % addresses.length],
          topics,
          data: `0x${words.join("")}`,
        };
        expect(() => decode(raw)).not.toThrow();
      }
    }
  });
});

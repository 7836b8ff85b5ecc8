import dnsPacket from "dns-packet";
import { describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.js";
import { buildTestQuery, decodeTestAnswer } from "./dns.testing.js";
import { answerQuery } from "./query-handler.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";
import type { ZoneLookup } from "./zone.js";

const SETTINGS = {
  nameServers: ["ns1.omniname.test", "ns2.omniname.test"],
  hostmaster: "hostmaster.omniname.test",
  serial: 42,
};
const ZONE = createStaticZoneLookup(
  {
    wallet: {
      "alice.wallet": {
        "record.A.0": "10.0.0.1",
        "record.A.1": "10.0.0.2",
        "record.A.ttl": "60",
        "record.AAAA.0": "2001:db8::1",
        "record.MX.0": "10 mx.alice.wallet",
        "token.ETH.0": "0xf39f",
      },
      "www.alice.wallet": { "record.CNAME.0": "alice.wallet" },
      "far.alice.wallet": { "record.CNAME.0": "alias.example.com" },
      "loop.wallet": { "record.CNAME.0": "loop.wallet" },
      "dangling.wallet": { "record.CNAME.0": "nothing.wallet" },
      "empty.wallet": {},
      "deep.under.wallet": { "record.A.0": "10.0.0.9" },
      "big.wallet": Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [`record.TXT.${i}`, `${i}`.padEnd(60, "x")]),
      ),
    },
    x: { "bob.x": { "record.TXT.0": "hello" } },
  },
  SETTINGS,
);
const SOA = "wallet. 300 IN SOA ns1.omniname.test. hostmaster.omniname.test. 42 3600 900 1209600 300";

interface Row {
  name: string;
  qname: string;
  qtype: string;
  rcode: string;
  aa?: boolean;
  answer?: string[];
  ns?: string[];
}

// coredns-style rows: query, then the expected rcode and sections.
const ROWS: Row[] = [
  {
    name: "A RRset, its own TTL",
    qname: "alice.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: ["alice.wallet. 60 IN A 10.0.0.1", "alice.wallet. 60 IN A 10.0.0.2"],
  },
  {
    name: "AAAA",
    qname: "alice.wallet",
    qtype: "AAAA",
    rcode: "NOERROR",
    answer: ["alice.wallet. 300 IN AAAA 2001:db8::1"],
  },
  {
    name: "MX",
    qname: "alice.wallet",
    qtype: "MX",
    rcode: "NOERROR",
    answer: ["alice.wallet. 300 IN MX 10 mx.alice.wallet."],
  },
  {
    name: "TXT from a token record",
    qname: "alice.wallet",
    qtype: "TXT",
    rcode: "NOERROR",
    answer: ['alice.wallet. 300 IN TXT "token.ETH=0xf39f"'],
  },
  {
    name: "0x20: the question's case is kept in question and answer",
    qname: "AlIcE.WaLLeT",
    qtype: "A",
    rcode: "NOERROR",
    answer: ["AlIcE.WaLLeT. 60 IN A 10.0.0.1", "AlIcE.WaLLeT. 60 IN A 10.0.0.2"],
  },
  {
    name: "NODATA: name exists, type absent, SOA in authority",
    qname: "alice.wallet",
    qtype: "SRV",
    rcode: "NOERROR",
    ns: [SOA],
  },
  {
    name: "a name without served records does not exist (as in the zone file)",
    qname: "empty.wallet",
    qtype: "A",
    rcode: "NXDOMAIN",
    ns: [SOA],
  },
  {
    name: "NODATA for an empty non-terminal",
    qname: "under.wallet",
    qtype: "A",
    rcode: "NOERROR",
    ns: [SOA],
  },
  {
    name: "NXDOMAIN with SOA in authority",
    qname: "nobody.wallet",
    qtype: "A",
    rcode: "NXDOMAIN",
    ns: [SOA],
  },
  {
    name: "NXDOMAIN keeps the SOA owner in the question's case",
    qname: "NOBODY.Wallet",
    qtype: "A",
    rcode: "NXDOMAIN",
    ns: [SOA.replace("wallet.", "Wallet.")],
  },
  {
    name: "NXDOMAIN for a label no served name can hold",
    qname: "a b.wallet",
    qtype: "A",
    rcode: "NXDOMAIN",
    ns: [SOA],
  },
  {
    name: "apex SOA",
    qname: "wallet",
    qtype: "SOA",
    rcode: "NOERROR",
    answer: [SOA.replace(" 300 ", " 3600 ")],
  },
  {
    name: "apex NS",
    qname: "wallet",
    qtype: "NS",
    rcode: "NOERROR",
    answer: ["wallet. 3600 IN NS ns1.omniname.test", "wallet. 3600 IN NS ns2.omniname.test"],
  },
  { name: "apex, other type: NODATA", qname: "wallet", qtype: "A", rcode: "NOERROR", ns: [SOA] },
  {
    name: "CNAME asked for",
    qname: "www.alice.wallet",
    qtype: "CNAME",
    rcode: "NOERROR",
    answer: ["www.alice.wallet. 300 IN CNAME alice.wallet."],
  },
  {
    name: "CNAME followed inside the zone",
    qname: "www.alice.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: [
      "www.alice.wallet. 300 IN CNAME alice.wallet.",
      "alice.wallet. 60 IN A 10.0.0.1",
      "alice.wallet. 60 IN A 10.0.0.2",
    ],
  },
  {
    name: "CNAME out of the zone: not followed",
    qname: "far.alice.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: ["far.alice.wallet. 300 IN CNAME alias.example.com."],
  },
  {
    name: "CNAME to a missing name: NXDOMAIN (RFC 6604)",
    qname: "dangling.wallet",
    qtype: "A",
    rcode: "NXDOMAIN",
    answer: ["dangling.wallet. 300 IN CNAME nothing.wallet."],
    ns: [SOA],
  },
  {
    name: "CNAME loop: stops",
    qname: "loop.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: ["loop.wallet. 300 IN CNAME loop.wallet."],
  },
  {
    name: "ANY: one RRset (RFC 8482)",
    qname: "alice.wallet",
    qtype: "ANY",
    rcode: "NOERROR",
    answer: ["alice.wallet. 60 IN A 10.0.0.1", "alice.wallet. 60 IN A 10.0.0.2"],
  },
  {
    name: "ANY at the apex: the SOA",
    qname: "wallet",
    qtype: "ANY",
    rcode: "NOERROR",
    answer: [SOA.replace(" 300 ", " 3600 ")],
  },
  {
    name: "a second zone",
    qname: "bob.x",
    qtype: "TXT",
    rcode: "NOERROR",
    answer: ['bob.x. 300 IN TXT "hello"'],
  },
  {
    name: "outside the served TLDs: REFUSED, not authoritative",
    qname: "example.com",
    qtype: "A",
    rcode: "REFUSED",
    aa: false,
  },
  { name: "the root: REFUSED", qname: ".", qtype: "NS", rcode: "REFUSED", aa: false },
  { name: "zone transfer: REFUSED", qname: "wallet", qtype: "AXFR", rcode: "REFUSED", aa: false },
];

describe("answerQuery over an inline zone", () => {
  it.each(ROWS)("$name", async (row) => {
    const query = buildTestQuery(row.qname, row.qtype);
    const got = decodeTestAnswer((await answerQuery(query, ZONE, "udp"))!);
    expect(got.rcode).toBe(row.rcode);
    expect(got.aa).toBe(row.aa ?? true);
    expect(got.id).toBe(4242);
    expect(got.questions).toEqual([`${row.qname === "." ? "." : row.qname} ${row.qtype}`]);
    expect(got.answer).toEqual(row.answer ?? []);
    expect(got.ns).toEqual(row.ns ?? []);
  });
});

function rawQuery(mutate: (b: Buffer) => Buffer): Buffer {
  return mutate(Buffer.from(buildTestQuery("alice.wallet", "A")));
}

/** The test query with one 16-bit header field overwritten. */
function withU16(value: number, offset: number): Buffer {
  return rawQuery((b) => {
    b.writeUInt16BE(value, offset);
    return b;
  });
}

describe("answerQuery: malformed and unusual packets", () => {
  it.each<[string, Buffer, string]>([
    ["a truncated question", rawQuery((b) => b.subarray(0, b.length - 3)), "FORMERR"],
    ["two questions", withU16(2, 4), "FORMERR"],
    ["an answer count in a query", withU16(1, 6), "FORMERR"],
    ["an additional count past the end", withU16(3, 10), "FORMERR"],
    ["trailing bytes", rawQuery((b) => Buffer.concat([b, Buffer.from([1, 2, 3])])), "FORMERR"],
    [
      "a compression pointer in the question",
      Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]),
      "FORMERR",
    ],
    ["opcode NOTIFY", withU16(0x2000 | 0x0100, 2), "NOTIMP"],
    ["opcode UPDATE", withU16(0x2800, 2), "NOTIMP"],
  ])("%s -> %s, no bigger than the query", async (_label, packet, rcode) => {
    const out = (await answerQuery(packet, ZONE, "udp"))!;
    expect(decodeTestAnswer(out).rcode).toBe(rcode);
    expect(out.length).toBeLessThanOrEqual(packet.length);
    expect(out.readUInt16BE(0)).toBe(packet.readUInt16BE(0));
  });

  it("drops a packet shorter than a header, and a response", async () => {
    expect(await answerQuery(Buffer.from([1, 2, 3]), ZONE, "udp")).toBeNull();
    expect(await answerQuery(withU16(0x8000, 2), ZONE, "udp")).toBeNull();
  });

  it("a malformed OPT: FORMERR", async () => {
    const q = buildTestQuery("alice.wallet", "A", { udpSize: 1232 });
    const bad = Buffer.from(q);
    bad.writeUInt16BE(5, bad.length - 2); // RDLENGTH past the end
    expect(decodeTestAnswer((await answerQuery(bad, ZONE, "udp"))!).rcode).toBe("FORMERR");
  });

  it("EDNS version 1: BADVERS, with our OPT", async () => {
    const got = decodeTestAnswer(
      (await answerQuery(
        buildTestQuery("alice.wallet", "A", { udpSize: 1232, ednsVersion: 1 }),
        ZONE,
        "udp",
      ))!,
    );
    expect(got.rcode).toBe("BADVERS");
    expect(got.udpSize).toBe(1232);
  });

  it("class CHAOS: REFUSED", async () => {
    const got = decodeTestAnswer(
      (await answerQuery(buildTestQuery("version.bind", "TXT", { klass: "CH" }), ZONE, "udp"))!,
    );
    expect(got.rcode).toBe("REFUSED");
  });

  it.each<[string, unknown, string]>([
    ["an AppError: the registry's rcode", new AppError("STORE_UNAVAILABLE"), "SERVFAIL"],
    ["an AppError mapped to REFUSED", new AppError("API_KEY_INVALID"), "REFUSED"],
    [
      "an AppError mapped to NXDOMAIN: never absence from a failure",
      new AppError("DOMAIN_NOT_FOUND"),
      "SERVFAIL",
    ],
    ["anything else", new TypeError("bug"), "SERVFAIL"],
  ])("a lookup that throws %s", async (_label, error, rcode) => {
    const failing: ZoneLookup = { findZone: ZONE.findZone, findNode: () => Promise.reject(error) };
    const got = decodeTestAnswer((await answerQuery(buildTestQuery("alice.wallet", "A"), failing, "udp"))!);
    expect(got.rcode).toBe(rcode);
  });

  it("a failing lookup: SERVFAIL, never a throw", async () => {
    const failing: ZoneLookup = {
      findZone: ZONE.findZone,
      findNode: () => Promise.reject(new Error("store down")),
    };
    expect(
      decodeTestAnswer((await answerQuery(buildTestQuery("alice.wallet", "A"), failing, "udp"))!).rcode,
    ).toBe("SERVFAIL");
  });

  it("an error answer to a query with OPT is no bigger than the query", async () => {
    const q = buildTestQuery("example.com", "A", { udpSize: 4096 });
    const out = (await answerQuery(q, ZONE, "udp"))!;
    expect(decodeTestAnswer(out).rcode).toBe("REFUSED");
    expect(out.length).toBeLessThanOrEqual(q.length);
  });
});

describe("answerQuery: sizes", () => {
  it("TC over UDP without EDNS when the answer passes 512 bytes; the full answer over TCP", async () => {
    const q = buildTestQuery("big.wallet", "TXT");
    const udp = decodeTestAnswer((await answerQuery(q, ZONE, "udp"))!);
    expect(udp).toMatchObject({ tc: true, answer: [], rcode: "NOERROR" });
    const tcp = decodeTestAnswer((await answerQuery(q, ZONE, "tcp"))!);
    expect(tcp.tc).toBe(false);
    expect(tcp.answer).toHaveLength(40);
  });

  it("EDNS(0): the client's buffer size decides, and our OPT answers it", async () => {
    const small = decodeTestAnswer(
      (await answerQuery(buildTestQuery("big.wallet", "TXT", { udpSize: 1024 }), ZONE, "udp"))!,
    );
    expect(small.tc).toBe(true);
    expect(small.udpSize).toBe(1232);
    const large = decodeTestAnswer(
      (await answerQuery(buildTestQuery("big.wallet", "TXT", { udpSize: 4096 }), ZONE, "udp"))!,
    );
    expect(large.tc).toBe(false);
    expect(large.answer).toHaveLength(40);
  });

  it("DoH answers are the UDP bytes when nothing is truncated", async () => {
    const q = buildTestQuery("alice.wallet", "MX", { udpSize: 1232 });
    expect(await answerQuery(q, ZONE, "doh")).toEqual(await answerQuery(q, ZONE, "udp"));
  });

  it("an answer decodes with dns-packet (well-formed wire)", async () => {
    const out = (await answerQuery(buildTestQuery("www.alice.wallet", "A"), ZONE, "udp"))!;
    expect(() => dnsPacket.decode(out)).not.toThrow();
  });
});

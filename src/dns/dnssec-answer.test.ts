import { createPublicKey, verify } from "node:crypto";
import dnsPacket from "dns-packet";
import { describe, expect, it } from "vitest";
import { AnswerCache } from "./answer-cache.js";
import { buildTestQuery } from "./dns.testing.js";
import { canonicalNameWire, generateDnssecKeyPem, parseDnssecKeys } from "./dnssec-keys.js";
import { DnssecSigner, SIGNATURE_REFRESH_MS } from "./dnssec-sign.js";
import { answerQuery } from "./query-handler.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";

const KEYS = parseDnssecKeys(generateDnssecKeyPem(), "test");
const NOW = Date.UTC(2026, 0, 1);
let clock = NOW;
function zone() {
  const lookup = createStaticZoneLookup(
    {
      wallet: {
        "alice.wallet": { "record.A.0": "10.0.0.1", "record.A.1": "10.0.0.2", "record.TXT.0": "hi" },
        "www.alice.wallet": { "record.CNAME.0": "alice.wallet" },
        "dangling.wallet": { "record.CNAME.0": "nothing.wallet" },
        "deep.under.wallet": { "record.A.0": "10.0.0.9" },
        "big.wallet": Object.fromEntries(
          Array.from({ length: 6 }, (_, i) => [`record.TXT.${i}`, `${i}`.padEnd(60, "x")]),
        ),
      },
    },
    { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 7 },
  );
  lookup.dnssec = new DnssecSigner(KEYS, () => clock);
  return lookup;
}
const ZONE = zone();

/** A record as a row: RRSIG and NSEC by their fields (the signature itself is checked apart). */
function row(a: dnsPacket.Answer): string {
  const d = (a as unknown as { data: Record<string, unknown> }).data;
  const ttl = (a as { ttl?: number }).ttl;
  switch (a.type) {
    case "RRSIG":
      return `${a.name} ${ttl} RRSIG ${d.typeCovered} ${d.algorithm} ${d.labels} ${d.originalTTL} ${d.keyTag} ${d.signersName}`;
    case "NSEC":
      return `${a.name} ${ttl} NSEC ${String(d.nextDomain).replace(/\u0000/g, "\\000")} ${(d.rrtypes as string[]).join(" ").replace("UNKNOWN_128", "NXNAME")}`;
    case "SOA":
      return `${a.name} ${ttl} SOA`;
    case "DNSKEY":
      return `${a.name} ${ttl} DNSKEY ${d.flags} ${d.algorithm}`;
    case "TXT":
      return `${a.name} ${ttl} TXT`;
    default:
      return `${a.name} ${ttl} ${a.type} ${String(d)}`;
  }
}

async function ask(qname: string, qtype: string, opts: { dnssecOk?: boolean; udpSize?: number } = {}) {
  const q = buildTestQuery(qname, qtype, { udpSize: opts.udpSize ?? 1232, dnssecOk: opts.dnssecOk ?? true });
  const buf = (await answerQuery(q, ZONE, "udp"))!;
  const p = dnsPacket.decode(buf);
  return {
    buf,
    packet: p,
    rcode: (p as unknown as { rcode: string }).rcode,
    tc: Boolean(p.flag_tc),
    answer: (p.answers ?? []).map(row),
    ns: (p.authorities ?? []).map(row),
  };
}

const TAG = KEYS.keys[0].keyTag;
const sig = (owner: string, ttl: number, type: string, labels: number) =>
  `${owner} ${ttl} RRSIG ${type} 13 ${labels} ${ttl} ${TAG} wallet`;

interface Row {
  name: string;
  qname: string;
  qtype: string;
  rcode: string;
  answer?: string[];
  ns?: string[];
}

// coredns-style rows, every query with DO set.
const SIGNED: Row[] = [
  {
    name: "positive: the RRset, then its RRSIG",
    qname: "alice.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: ["alice.wallet 300 A 10.0.0.1", "alice.wallet 300 A 10.0.0.2", sig("alice.wallet", 300, "A", 2)],
  },
  {
    name: "a CNAME in the zone: each RRset signed under its own owner",
    qname: "www.alice.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: [
      "www.alice.wallet 300 CNAME alice.wallet",
      sig("www.alice.wallet", 300, "CNAME", 3),
      "alice.wallet 300 A 10.0.0.1",
      "alice.wallet 300 A 10.0.0.2",
      sig("alice.wallet", 300, "A", 2),
    ],
  },
  {
    name: "NODATA: the name's NSEC lists its types (compact denial)",
    qname: "alice.wallet",
    qtype: "AAAA",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "alice.wallet 300 NSEC \\000.alice.wallet A TXT RRSIG NSEC",
      sig("alice.wallet", 300, "NSEC", 2),
    ],
  },
  {
    name: "NXDOMAIN becomes NOERROR with NXNAME (RFC 9824)",
    qname: "nope.wallet",
    qtype: "A",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "nope.wallet 300 NSEC \\000.nope.wallet RRSIG NSEC NXNAME",
      sig("nope.wallet", 300, "NSEC", 2),
    ],
  },
  {
    name: "an empty non-terminal: NODATA, only RRSIG and NSEC",
    qname: "under.wallet",
    qtype: "A",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "under.wallet 300 NSEC \\000.under.wallet RRSIG NSEC",
      sig("under.wallet", 300, "NSEC", 2),
    ],
  },
  {
    name: "a CNAME to a missing name: the chain, then the target's denial",
    qname: "dangling.wallet",
    qtype: "A",
    rcode: "NOERROR",
    answer: ["dangling.wallet 300 CNAME nothing.wallet", sig("dangling.wallet", 300, "CNAME", 2)],
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "nothing.wallet 300 NSEC \\000.nothing.wallet RRSIG NSEC NXNAME",
      sig("nothing.wallet", 300, "NSEC", 2),
    ],
  },
  {
    name: "DNSKEY at the apex, signed",
    qname: "wallet",
    qtype: "DNSKEY",
    rcode: "NOERROR",
    answer: ["wallet 3600 DNSKEY 257 13", sig("wallet", 3600, "DNSKEY", 1)],
  },
  {
    name: "SOA at the apex",
    qname: "wallet",
    qtype: "SOA",
    rcode: "NOERROR",
    answer: ["wallet 3600 SOA", sig("wallet", 3600, "SOA", 1)],
  },
  {
    name: "NODATA at the apex: NS, SOA and DNSKEY in its NSEC",
    qname: "wallet",
    qtype: "MX",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "wallet 300 NSEC \\000.wallet NS SOA RRSIG NSEC DNSKEY",
      sig("wallet", 300, "NSEC", 1),
    ],
  },
  {
    name: "DS at the apex: NODATA (no parent zone here)",
    qname: "wallet",
    qtype: "DS",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "wallet 300 NSEC \\000.wallet NS SOA RRSIG NSEC DNSKEY",
      sig("wallet", 300, "NSEC", 1),
    ],
  },
  {
    name: "a query for NSEC: the NSEC itself as the answer",
    qname: "alice.wallet",
    qtype: "NSEC",
    rcode: "NOERROR",
    answer: [
      "alice.wallet 300 NSEC \\000.alice.wallet A TXT RRSIG NSEC",
      sig("alice.wallet", 300, "NSEC", 2),
    ],
  },
  {
    name: "a query for NSEC of a missing name: its NXNAME NSEC",
    qname: "nope.wallet",
    qtype: "NSEC",
    rcode: "NOERROR",
    answer: ["nope.wallet 300 NSEC \\000.nope.wallet RRSIG NSEC NXNAME", sig("nope.wallet", 300, "NSEC", 2)],
  },
  {
    name: "a query for RRSIG: NODATA with the name's NSEC (validators never ask for RRSIG alone)",
    qname: "alice.wallet",
    qtype: "RRSIG",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "alice.wallet 300 NSEC \\000.alice.wallet A TXT RRSIG NSEC",
      sig("alice.wallet", 300, "NSEC", 2),
    ],
  },
  {
    name: "a name no server could hold (a label with a space): denied the same way",
    qname: "a b.wallet",
    qtype: "A",
    rcode: "NOERROR",
    ns: [
      "wallet 300 SOA",
      sig("wallet", 300, "SOA", 1),
      "a b.wallet 300 NSEC \\000.a b.wallet RRSIG NSEC NXNAME",
      sig("a b.wallet", 300, "NSEC", 2),
    ],
  },
];

describe("DNSSEC answers (DO set)", () => {
  it.each(SIGNED)("$name", async (r) => {
    const got = await ask(r.qname, r.qtype);
    expect(got.rcode).toBe(r.rcode);
    expect(got.answer).toEqual(r.answer ?? []);
    expect(got.ns).toEqual(r.ns ?? []);
    const opt = got.packet.additionals?.find((a) => a.type === "OPT") as { flags?: number } | undefined;
    expect((opt?.flags ?? 0) & dnsPacket.DNSSEC_OK).toBe(dnsPacket.DNSSEC_OK);
  });

  it("every RRSIG verifies with the DNSKEY over the RRset in canonical form", async () => {
    const pub = createPublicKey({
      key: {
        kty: "EC",
        crv: "P-256",
        x: b64url(KEYS.keys[0].dnskey.subarray(4, 36)),
        y: b64url(KEYS.keys[0].dnskey.subarray(36)),
      },
      format: "jwk",
    });
    let checked = 0;
    for (const r of SIGNED) {
      const got = await ask(r.qname, r.qtype);
      const rrs = [...(got.packet.answers ?? []), ...(got.packet.authorities ?? [])];
      for (const s of rrs.filter((a) => a.type === "RRSIG")) {
        const d = (s as { data: { typeCovered: string; signature: Buffer } }).data;
        const covered = rrs.filter((a) => a.type === d.typeCovered && a.name === s.name);
        const data = signedData(s, covered);
        const ok = verify("sha256", data, { key: pub, dsaEncoding: "ieee-p1363" }, d.signature);
        expect(ok, `${r.name}: ${s.name} ${d.typeCovered}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBe(24);
  });

  it("without DO: the unsigned answers of before, NXDOMAIN kept; DNSKEY still answered", async () => {
    const nx = await ask("nope.wallet", "A", { dnssecOk: false });
    expect(nx.rcode).toBe("NXDOMAIN");
    expect(nx.ns).toEqual(["wallet 300 SOA"]);
    const a = await ask("alice.wallet", "A", { dnssecOk: false });
    expect(a.answer).toEqual(["alice.wallet 300 A 10.0.0.1", "alice.wallet 300 A 10.0.0.2"]);
    const key = await ask("wallet", "DNSKEY", { dnssecOk: false });
    expect(key.answer).toEqual(["wallet 3600 DNSKEY 257 13"]);
    const noEdns = dnsPacket.decode((await answerQuery(buildTestQuery("nope.wallet", "A"), ZONE, "udp"))!);
    expect((noEdns as unknown as { rcode: string }).rcode).toBe("NXDOMAIN");
  });

  it("a signed answer past the client's 512 bytes: TC; over TCP the whole of it", async () => {
    const udp = await ask("big.wallet", "TXT", { udpSize: 512 });
    expect(udp.tc).toBe(true);
    expect(udp.answer).toEqual([]);
    const tcp = dnsPacket.decode(
      (await answerQuery(
        buildTestQuery("big.wallet", "TXT", { udpSize: 512, dnssecOk: true }),
        ZONE,
        "tcp",
      ))!,
    );
    expect(tcp.answers?.map((a) => a.type)).toEqual([...Array(6).fill("TXT"), "RRSIG"]);
  });

  it("signatures are cached (bounded) and made again once a day old; the answer cache follows them", async () => {
    const lookup = zone();
    const signer = lookup.dnssec!;
    clock = NOW;
    await answerQuery(buildTestQuery("alice.wallet", "A", { udpSize: 1232, dnssecOk: true }), lookup, "udp");
    const made = signer.signed;
    await answerQuery(buildTestQuery("alice.wallet", "A", { udpSize: 1232, dnssecOk: true }), lookup, "udp");
    expect(signer.signed).toBe(made);
    expect(signer.hits).toBeGreaterThan(0);
    const cache = new AnswerCache({ lookup, clock: () => clock });
    const q = buildTestQuery("alice.wallet", "A", { udpSize: 1232, dnssecOk: true });
    const first = (await cache.answer(q, "udp"))!;
    expect(cache.get(q, "udp")).toEqual(first);
    clock = NOW + SIGNATURE_REFRESH_MS;
    expect(cache.get(q, "udp")).toBeNull();
    const again = (await cache.answer(q, "udp"))!;
    expect(again.equals(first)).toBe(false);
    expect(signer.signed).toBeGreaterThan(made);
    clock = NOW;
    // A small signer cache: the least recently used goes first, the size never passes the bound.
    const small = new DnssecSigner(KEYS, () => NOW, 2);
    const signA = (owner: string) =>
      small.sign("wallet", { owner, type: 1, ttl: 300, rdatas: [Buffer.from([10, 0, 0, 1])] });
    signA("a.wallet");
    signA("b.wallet");
    signA("a.wallet");
    signA("c.wallet");
    expect(small.size).toBe(2);
    const made2 = small.signed;
    signA("a.wallet");
    expect(small.signed).toBe(made2);
    signA("b.wallet");
    expect(small.signed).toBe(made2 + 1);
  });

  it("inception an hour in the past, expiration a week after signing", async () => {
    const got = await ask("alice.wallet", "A");
    const s = got.packet.answers!.find((a) => a.type === "RRSIG") as {
      data: { inception: number; expiration: number };
    };
    expect(s.data.inception).toBe(NOW / 1000 - 3600);
    expect(s.data.expiration).toBe(NOW / 1000 + 7 * 86_400);
  });

  it("hostile questions with DO (any byte in a label, deep and long names, every type): an answer, never a throw", async () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 3_000; i++) {
      const labels: Buffer[] = [];
      for (let l = 0, n = 1 + rand(6); l < n; l++) {
        const label = Buffer.alloc(1 + rand(i % 50 === 0 ? 63 : 8));
        for (let k = 0; k < label.length; k++) label[k] = rand(4) === 0 ? rand(256) : 0x61 + rand(26);
        labels.push(label);
      }
      // Some names as long as the wire allows (255 octets), to test the NSEC next name's bound.
      if (i % 100 === 0)
        while (labels.reduce((n, l) => n + l.length + 1, 1) + 64 <= 255 - 7)
          labels.push(Buffer.alloc(63, 0x62));
      const name = Buffer.concat([
        ...labels.flatMap((l) => [Buffer.from([l.length]), l]),
        Buffer.from([6]),
        Buffer.from("wallet"),
        Buffer.from([0]),
      ]);
      const header = Buffer.from([0, i & 0xff, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1]);
      const question = Buffer.from([0, 0, 0, 1]);
      question.writeUInt16BE(rand(4) === 0 ? rand(65536) : [1, 16, 28, 43, 46, 47, 48, 50, 255][rand(9)], 0);
      const opt = Buffer.from([0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0]);
      const packet = Buffer.concat([header, name, question, opt]);
      const out = await answerQuery(packet, ZONE, i % 2 ? "udp" : "tcp");
      expect(out).not.toBeNull();
      const decoded = dnsPacket.decode(out!);
      expect(["NOERROR", "FORMERR", "REFUSED"]).toContain((decoded as unknown as { rcode: string }).rcode);
    }
  });
});

function b64url(b: Buffer): string {
  return b.toString("base64url");
}

/** RFC 4034 §3.1.8.1: RRSIG RDATA without the signature, then each RR in canonical form and order. */
function signedData(rrsig: dnsPacket.Answer, covered: dnsPacket.Answer[]): Buffer {
  const d = (rrsig as { data: { signature: Buffer } }).data;
  const rdata = (dnsPacket as unknown as { rrsig: { encode(x: unknown): Buffer } }).rrsig
    .encode(d)
    .subarray(2);
  const head = rdata.subarray(0, rdata.length - d.signature.length);
  const rrs = covered.map((rr) => {
    const codec = dnsPacket as unknown as { answer: { encode(a: unknown): Buffer } };
    const enc = codec.answer.encode({ ...rr, name: rr.name.toLowerCase() } as dnsPacket.Answer);
    // Owner (canonical, uncompressed), type, class, original TTL, RDLENGTH and RDATA.
    const owner = canonicalNameWire(rr.name);
    const rest = enc.subarray(owner.length);
    rest.writeUInt32BE(head.readUInt32BE(4), 4);
    return { owner, rest, rdata: rest.subarray(10) };
  });
  rrs.sort((a, b) => Buffer.compare(a.rdata, b.rdata));
  return Buffer.concat([head, ...rrs.flatMap((r) => [r.owner, r.rest])]);
}

import dnsPacket from "dns-packet";
import { describe, expect, it } from "vitest";
import { decodeTestAnswer } from "./dns.testing.js";
import { answerQuery } from "./query-handler.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";

const ZONE = createStaticZoneLookup(
  { wallet: { "alice.wallet": { "record.A.0": "10.0.0.1" } } },
  { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 42 },
);
const SOA = "wallet. 3600 IN SOA ns1.omniname.test. hostmaster.omniname.test. 42 3600 900 1209600 300";

/** An IXFR query as a secondary sends it: the client's SOA (of `serial`) in the authority section. */
function ixfrQuery(zone: string, authorities: dnsPacket.Answer[]): Buffer {
  return dnsPacket.encode({
    type: "query",
    id: 77,
    questions: [{ name: zone, type: "IXFR" as never }],
    authorities,
  });
}
const clientSoa = (zone: string, serial: number, type = "SOA") =>
  ({
    name: zone,
    type,
    data:
      type === "SOA"
        ? { mname: "a", rname: "b", serial, refresh: 1, retry: 1, expire: 1, minimum: 1 }
        : "10.0.0.1",
  }) as dnsPacket.Answer;

// RFC 1995 §2/§4: over UDP the answer is our current SOA alone, and the client that is behind
// asks again over TCP; never FORMERR for the SOA the client sends.
describe("IXFR outside a transfer (UDP, DoH)", () => {
  const rows: Array<{ name: string; packet: Buffer; rcode: string; answer: string[] }> = [
    {
      name: "an older serial: our SOA alone",
      packet: ixfrQuery("wallet", [clientSoa("wallet", 7)]),
      rcode: "NOERROR",
      answer: [SOA],
    },
    {
      name: "the current serial: our SOA alone",
      packet: ixfrQuery("wallet", [clientSoa("wallet", 42)]),
      rcode: "NOERROR",
      answer: [SOA],
    },
    {
      name: "a zone we do not serve: REFUSED",
      packet: ixfrQuery("example.com", [clientSoa("example.com", 7)]),
      rcode: "REFUSED",
      answer: [],
    },
    { name: "no SOA of the client: FORMERR", packet: ixfrQuery("wallet", []), rcode: "FORMERR", answer: [] },
    {
      name: "another record than an SOA: FORMERR",
      packet: ixfrQuery("wallet", [clientSoa("wallet", 7, "A")]),
      rcode: "FORMERR",
      answer: [],
    },
  ];
  it.each(rows)("$name", async (row) => {
    for (const transport of ["udp", "doh"] as const) {
      const got = decodeTestAnswer((await answerQuery(row.packet, ZONE, transport))!);
      expect(got.rcode).toBe(row.rcode);
      expect(got.answer).toEqual(row.answer);
      expect(got.aa).toBe(row.rcode === "NOERROR");
    }
  });

  it("an authority record in any other query is still FORMERR", async () => {
    const soaQuery = dnsPacket.encode({
      type: "query",
      id: 78,
      questions: [{ name: "wallet", type: "SOA" }],
      authorities: [clientSoa("wallet", 7)],
    });
    expect(decodeTestAnswer((await answerQuery(soaQuery, ZONE, "udp"))!).rcode).toBe("FORMERR");
  });
});

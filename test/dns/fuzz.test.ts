import { connect } from "node:net";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUdpDnsClient } from "../../src/dns/dns-client.testing.js";
import { buildTestQuery } from "../../src/dns/dns.testing.js";
import { AnswerCache } from "../../src/dns/answer-cache.js";
import { createDnsServer, type DnsServer } from "../../src/dns/dns-server.js";
import { answerQuery } from "../../src/dns/query-handler.js";
import { createStaticZoneLookup } from "../../src/dns/static-zone-lookup.js";
import { createRng } from "../../src/devnet/fixture-values.js";

const LOOKUP = createStaticZoneLookup(
  {
    wallet: {
      "alice.wallet": {
        "record.A.0": "10.0.0.1",
        "record.TXT.0": "hello",
        "record.MX.0": "10 mx.example.com",
      },
      "www.alice.wallet": { "record.CNAME.0": "alice.wallet" },
    },
  },
  { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 1 },
);

const SEEDS = [
  buildTestQuery("alice.wallet", "A"),
  buildTestQuery("www.alice.wallet", "TXT", { udpSize: 1232 }),
  buildTestQuery("nobody.wallet", "MX", { udpSize: 512 }),
  buildTestQuery("example.com", "ANY"),
];

/** One hostile packet: random bytes, or a valid query mutated the ways attackers and bugs do. */
function hostilePacket(rand: () => number): Buffer {
  const int = (n: number) => Math.floor(rand() * n);
  const kind = int(8);
  if (kind === 0) {
    const b = Buffer.alloc(int(80));
    for (let i = 0; i < b.length; i++) b[i] = int(256);
    return b;
  }
  const seed = Buffer.from(SEEDS[int(SEEDS.length)]);
  switch (kind) {
    case 1: // bit flips
      for (let i = 0, n = 1 + int(4); i < n; i++) seed[int(seed.length)] ^= 1 << int(8);
      return seed;
    case 2: // truncated anywhere
      return seed.subarray(0, int(seed.length));
    case 3: // counts larger than the packet
      seed.writeUInt16BE(int(65536), 4 + 2 * int(4));
      return seed;
    case 4: {
      // an additional record whose name is a compression loop (points at itself)
      const loop = Buffer.from([0xc0, seed.length, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0]);
      seed.writeUInt16BE(seed.readUInt16BE(10) + 1, 10);
      return Buffer.concat([seed, loop]);
    }
    case 5: {
      // a truncated OPT
      const withOpt = Buffer.from(buildTestQuery("alice.wallet", "A", { udpSize: int(65536) }));
      return withOpt.subarray(0, withOpt.length - 1 - int(10));
    }
    case 6: // a question name with a pointer or an over-long label
      seed[12] = [0xc0, 0x40, 0x80, 64, 255][int(5)];
      return seed;
    default: {
      // random bytes appended or inserted
      const extra = Buffer.alloc(1 + int(20));
      for (let i = 0; i < extra.length; i++) extra[i] = int(256);
      const at = int(seed.length);
      return Buffer.concat([seed.subarray(0, at), extra, seed.subarray(at)]);
    }
  }
}

function checkAnswer(packet: Buffer, answer: Buffer | null): void {
  if (answer === null) return;
  if (answer.length < 12 || answer.length > 65535) throw new Error(`answer of ${answer.length} bytes`);
  const rcode = answer.readUInt16BE(2) & 0xf;
  // No amplification: FORMERR, SERVFAIL, NOTIMP, REFUSED are never larger than the query.
  if ([1, 2, 4, 5].includes(rcode) && answer.length > packet.length)
    throw new Error(
      `rcode ${rcode}: ${answer.length} bytes for a ${packet.length}-byte query ${packet.toString("hex")}`,
    );
}

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

describe("fuzz: hostile packets", () => {
  it("1,000,000 random and mutated packets into the query handler: no throw, no amplification, memory flat", async () => {
    const rand = createRng(20260101);
    let heapAfterWarmup = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const packet = hostilePacket(rand);
      checkAnswer(packet, await answerQuery(packet, LOOKUP, i % 2 === 0 ? "udp" : "tcp"));
      if (i === 100_000) {
        gc();
        heapAfterWarmup = process.memoryUsage().heapUsed;
      }
    }
    gc();
    // Nothing is kept per packet: the heap after 900,000 more packets is where it was.
    expect(process.memoryUsage().heapUsed - heapAfterWarmup).toBeLessThan(16 * 1024 * 1024);
  }, 600_000);

  describe("into the UDP and TCP servers", () => {
    let server: DnsServer;
    beforeAll(async () => {
      server = await createDnsServer({
        lookup: LOOKUP,
        // Hostile packets also go through the answer cache's key reading, as in the dns role.
        cache: new AnswerCache({ lookup: LOOKUP, clock: Date.now }),
        host: "127.0.0.1",
        port: 0,
        tcpIdleMs: 2000,
        tcpMaxClients: 64,
      });
    });
    afterAll(async () => {
      await server.close();
    });

    it("20,000 hostile datagrams: each batch is followed by a valid query, which is answered", async () => {
      const rand = createRng(7);
      const { createSocket } = await import("node:dgram");
      const s = createSocket("udp4");
      const client = createUdpDnsClient("127.0.0.1", server.port);
      try {
        // Batches small enough for a socket buffer: UDP drops what overflows it, and a dropped
        // probe would say nothing about the server.
        for (let batch = 0; batch < 200; batch++) {
          for (let i = 0; i < 100; i++) {
            const p = hostilePacket(rand);
            await new Promise<void>((r) => s.send(p, server.port, "127.0.0.1", () => r()));
          }
          const answer = await client.ask(buildTestQuery("alice.wallet", "A", { id: batch }));
          expect(answer.readUInt16BE(0)).toBe(batch);
        }
      } finally {
        s.close();
        client.close();
      }
    }, 120_000);

    it("TCP: 0-length frames, a 65,535-byte frame, hostile frames, a frame cut short; the server keeps answering", async () => {
      const rand = createRng(11);
      const frames: Buffer[] = [
        Buffer.from([0, 0]),
        Buffer.concat([Buffer.from([0xff, 0xff]), Buffer.alloc(65535, 0x41)]),
      ];
      for (let i = 0; i < 2000; i++) {
        const p = hostilePacket(rand);
        const f = Buffer.alloc(2 + p.length);
        f.writeUInt16BE(p.length, 0);
        p.copy(f, 2);
        frames.push(f);
      }
      await new Promise<void>((resolve, reject) => {
        const c = connect({ host: "127.0.0.1", port: server.port }, () => {
          c.write(Buffer.concat(frames));
          // A frame that announces 65,535 bytes and ends early: the server waits, then the idle timeout closes it.
          c.end(Buffer.from([0xff, 0xff, 1, 2, 3]));
        });
        c.on("data", () => {});
        c.on("close", () => resolve());
        c.on("error", reject);
      });
      const client = createUdpDnsClient("127.0.0.1", server.port);
      const answer = await client.ask(buildTestQuery("alice.wallet", "A", { id: 999 }));
      client.close();
      expect(answer.readUInt16BE(0)).toBe(999);
    }, 120_000);
  });
});

import { spawn } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerCache } from "./answer-cache.js";
import { createDnsServer, type DnsUdpServer } from "./dns-server.js";
import { buildTestQuery, decodeTestAnswer } from "./dns.testing.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";
import { readTsig, signRequest, type TsigKey } from "./tsig.js";
import { loadUdpBatch, shareUdpSocket } from "./udp-batch.js";
import { createXfrService } from "./xfr-server.js";
import type { XfrZones } from "./xfr-zones.js";

const NOW = Date.now();
const KEY: TsigKey = { name: "batch-test", secret: Buffer.alloc(32, 7) };

function zoneLookup() {
  return createStaticZoneLookup(
    {
      wallet: {
        "alice.wallet": { "record.A.0": "10.0.0.1", "record.AAAA.0": "2001:db8::1", "token.ETH.0": "0xf39f" },
        "www.alice.wallet": { "record.CNAME.0": "alice.wallet" },
        "big.wallet": Object.fromEntries(
          Array.from({ length: 40 }, (_, i) => [`record.TXT.${i}`, `${i}`.padEnd(60, "x")]),
        ),
      },
    },
    { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 42 },
  );
}

/** A server of one UDP path: its own lookup and answer cache, TSIG answered with KEY. */
function startServer(host: string, udpBatch: boolean): Promise<DnsUdpServer> {
  const lookup = zoneLookup();
  return createDnsServer({
    lookup,
    host,
    port: 0,
    tcpIdleMs: 1000,
    tcpMaxClients: 4,
    udpBatch,
    cache: new AnswerCache({ lookup, clock: () => NOW }),
    // answerSigned reads only the keys and the clock, never the zones.
    xfr: createXfrService({ zones: {} as XfrZones, keys: [KEY], clock: () => NOW }),
  });
}

/** Sends `bytes` from a fresh socket; the first datagram back, or null after `waitMs`. */
function exchange(port: number, bytes: Buffer, host = "127.0.0.1", waitMs = 1500): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const s: Socket = createSocket(host.includes(":") ? "udp6" : "udp4");
    const timer = setTimeout(() => {
      s.close();
      resolve(null);
    }, waitMs);
    s.once("message", (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m);
    });
    s.send(bytes, port, host, (e) => {
      if (e) {
        clearTimeout(timer);
        s.close();
        reject(e);
      }
    });
  });
}

const HEADER_ONLY = Buffer.from("04d2010000010000000000", "hex");
const QUERIES: Array<[string, Buffer]> = [
  ["A, a name of the zone", buildTestQuery("alice.wallet", "A", { id: 1 })],
  ["the same, 0x20 case", buildTestQuery("AlIcE.WaLLet", "A", { id: 2 })],
  ["CNAME chain with EDNS", buildTestQuery("www.alice.wallet", "A", { id: 3, udpSize: 1232 })],
  ["NXDOMAIN", buildTestQuery("nobody.wallet", "A", { id: 4 })],
  ["REFUSED: outside the zones", buildTestQuery("example.com", "A", { id: 5 })],
  ["truncated: TC without EDNS", buildTestQuery("big.wallet", "TXT", { id: 6 })],
  ["large with EDNS 4096", buildTestQuery("big.wallet", "TXT", { id: 7, udpSize: 4096 })],
  ["malformed: a header cut short", HEADER_ONLY],
  ["malformed: random bytes", Buffer.from("ffee0102030405060708090a0b0c0d0e0f", "hex")],
  ["three bytes", Buffer.from([1, 2, 3])],
  [
    "oversized: a 65,000-byte datagram",
    Buffer.concat([buildTestQuery("alice.wallet", "A", { id: 8 }), Buffer.alloc(65_000 - 30, 0x41)]),
  ],
  ["TSIG-signed SOA", signRequest(buildTestQuery("wallet", "SOA", { id: 9 }), KEY, NOW).packet],
  [
    "TSIG with a wrong key",
    signRequest(buildTestQuery("wallet", "SOA", { id: 10 }), { ...KEY, secret: Buffer.alloc(32, 1) }, NOW)
      .packet,
  ],
];

describe("batched UDP (native/udp-batch): the same answers as node:dgram", () => {
  let batch: DnsUdpServer;
  let dgram: DnsUdpServer;

  beforeAll(async () => {
    batch = await startServer("127.0.0.1", true);
    dgram = await startServer("127.0.0.1", false);
  });
  afterAll(async () => {
    await batch?.close();
    await dgram?.close();
  });

  it("the addon is built and taken on Linux; DNS_UDP_BATCH=false forces node:dgram", () => {
    if (process.platform === "linux") {
      const loaded = loadUdpBatch();
      expect(loaded.binding === null ? loaded.reason : "loaded").toBe("loaded");
      expect(batch.udpPath).toBe("batch");
    }
    expect(dgram.udpPath).toBe("dgram");
    expect(dgram.udpStats()).toBeNull();
  });

  it.each(QUERIES)("%s: byte for byte, computed and then cached", async (_, query) => {
    for (let round = 0; round < 2; round++) {
      const [a, b] = await Promise.all([exchange(batch.port, query), exchange(dgram.port, query)]);
      expect(a === null ? null : a.toString("hex")).toBe(b === null ? null : b.toString("hex"));
    }
  });

  it("the table's answers are what a resolver expects (the comparison is not of two silences)", async () => {
    const hit = await exchange(batch.port, buildTestQuery("AlIcE.WaLLet", "A", { id: 77 }));
    expect(hit).not.toBeNull();
    const d = decodeTestAnswer(hit!);
    expect(d.rcode).toBe("NOERROR");
    expect(d.answer).toContain("AlIcE.WaLLet. 300 IN A 10.0.0.1");
    const tc = await exchange(batch.port, buildTestQuery("big.wallet", "TXT", { id: 78 }));
    expect(tc![2] & 0x02).toBe(0x02);
    const signed = await exchange(batch.port, QUERIES[11][1]);
    expect(readTsig(signed!).kind).toBe("tsig");
    expect(batch.udpStats()!.received).toBeGreaterThan(QUERIES.length);
  });

  it("a burst from 40 client sockets, 100 queries each at once: every query answered", async () => {
    const clients = 40;
    const perClient = 100;
    const answered = await Promise.all(
      Array.from({ length: clients }, (_, c) => {
        const s = createSocket("udp4");
        const ids = new Set<number>();
        return new Promise<number>((resolve) => {
          const done = () => {
            s.close();
            resolve(ids.size);
          };
          const timer = setTimeout(done, 10_000);
          s.on("message", (m) => {
            ids.add(m.readUInt16BE(0));
            if (ids.size === perClient) {
              clearTimeout(timer);
              done();
            }
          });
          s.bind(0, "127.0.0.1", () => {
            for (let i = 0; i < perClient; i++) {
              // Half repeated names (cache hits), half distinct (computed): both paths of a batch.
              const name = i % 2 === 0 ? "alice.wallet" : `n${c}-${i}.wallet`;
              s.send(buildTestQuery(name, "A", { id: i }), batch.port, "127.0.0.1");
            }
          });
        });
      }),
    );
    expect(answered).toEqual(Array.from({ length: clients }, () => perClient));
    const stats = batch.udpStats()!;
    // Batches of more than one datagram were read: recvmmsg did the batching.
    expect(stats.batches).toBeLessThan(stats.received);
  });
});

describe("batched UDP over IPv6", () => {
  it("::1: answers, the same bytes as node:dgram", async () => {
    const batch = await startServer("::1", true);
    const dgram = await startServer("::1", false);
    try {
      expect(batch.udpPath).toBe(process.platform === "linux" ? "batch" : "dgram");
      for (const q of [
        buildTestQuery("alice.wallet", "AAAA", { id: 11 }),
        buildTestQuery("nobody.wallet", "A", { id: 12 }),
      ]) {
        const [a, b] = await Promise.all([exchange(batch.port, q, "::1"), exchange(dgram.port, q, "::1")]);
        expect(a).not.toBeNull();
        expect(a!.toString("hex")).toBe(b!.toString("hex"));
      }
      const d = decodeTestAnswer(
        (await exchange(batch.port, buildTestQuery("alice.wallet", "AAAA", { id: 13 }), "::1"))!,
      );
      expect(d.answer).toContain("alice.wallet. 300 IN AAAA 2001:db8::1");
    } finally {
      await batch.close();
      await dgram.close();
    }
  });
});

describe("closing the batched socket", () => {
  it("with queries in flight: no crash, and the process then exits by itself", async () => {
    const script = fileURLToPath(new URL("./udp-batch-exit.testing.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("still running after 30 s");
      }, 30_000);
      child.on("exit", (c, sig) => {
        clearTimeout(timer);
        resolve(c ?? String(sig));
      });
    });
    expect(code, out).toBe(0);
    expect(out).toMatch(/closed with \d+ in flight, path batch/);
  });
});

describe.runIf(process.platform === "linux")("one socket read by several processes (DNS_WORKERS)", () => {
  it("a busy process leaves the datagrams to the free one: every query answered while it is stuck", async () => {
    const shared = shareUdpSocket(true, "127.0.0.1", 0, 1 << 20);
    if (shared === null) throw new Error("addon not loaded");
    const script = fileURLToPath(new URL("./udp-batch-share.testing.ts", import.meta.url));
    const children = [0, 1].map((marker) =>
      spawn(process.execPath, ["--import", "tsx", script, String(marker), marker === 1 ? "busy" : "free"], {
        stdio: ["ignore", "pipe", "inherit", "ipc", shared.fd],
      }),
    );
    try {
      // Each child says its port when it reads the socket; the busy one then blocks for 3 s.
      const ports = await Promise.all(
        children.map((c) => new Promise<number>((resolve) => c.once("message", (m) => resolve(Number(m))))),
      );
      expect(ports[0]).toBe(ports[1]);
      const counts = [0, 0];
      const client = createSocket("udp4");
      const started = performance.now();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2500);
        let got = 0;
        client.on("message", (m) => {
          counts[m[2]]++;
          if (++got === 100) {
            clearTimeout(timer);
            resolve();
          }
        });
        client.bind(0, "127.0.0.1", () => {
          for (let i = 0; i < 100; i++)
            client.send(buildTestQuery("alice.wallet", "A", { id: i }), ports[0], "127.0.0.1");
        });
      });
      client.close();
      // All from the free process, before the busy one could have read any (3 s).
      expect(counts).toEqual([100, 0]);
      expect(performance.now() - started).toBeLessThan(2500);
    } finally {
      for (const c of children) c.kill("SIGKILL");
      shared.close();
    }
  });
});

describe.runIf(process.platform === "linux")("the addon's handle collected without close()", () => {
  it("closes its socket and lets go of its buffers and callback", async () => {
    const { binding } = loadUdpBatch();
    if (binding === null) throw new Error("the addon is not built");
    v8.setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const collected = new Set<string>();
    const registry = new FinalizationRegistry<string>((what) => collected.add(what));
    const port = (() => {
      const b = (n: number) => Buffer.alloc(n);
      const bufs = [b(binding.SLOT), b(binding.ADDR), b(4), b(binding.SLOT), b(4)] as const;
      const onBatch = () => {};
      const handle = binding.open("127.0.0.1", 0, 1, ...bufs, 0, onBatch);
      for (const [i, buf] of bufs.entries()) registry.register(buf, `buffer ${i}`);
      registry.register(onBatch, "callback");
      registry.register(handle, "handle");
      return binding.port(handle);
    })();
    const want = ["buffer 0", "buffer 1", "buffer 2", "buffer 3", "buffer 4", "callback", "handle"];
    // The handle's finalizer deletes the references; a later collection takes what they held.
    for (let i = 0; i < 50 && collected.size < want.length; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect([...collected].sort()).toEqual(want);
    // The port is free again: its socket was closed.
    const again = createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      again.once("error", reject);
      again.bind(port, "127.0.0.1", () => resolve());
    });
    again.close();
  });
});

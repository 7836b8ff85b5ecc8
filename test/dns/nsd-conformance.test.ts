import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import dnsPacket from "dns-packet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUdpDnsClient } from "../../src/dns/dns-client.testing.js";
import { buildTestQuery } from "../../src/dns/dns.testing.js";
import { AnswerCache } from "../../src/dns/answer-cache.js";
import { createDnsServer, type DnsServer } from "../../src/dns/dns-server.js";
import { createStoreZoneLookup } from "../../src/dns/store-zone-lookup.js";
import { exportZones } from "../../src/dns/zone-export.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createResolution } from "../../src/resolution/resolution.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";
import { freePort } from "../helpers/free-port.js";

const NOW = Date.UTC(2025, 0, 1);
const APEX = {
  nameServers: ["ns1.omniname.test", "ns2.omniname.test"],
  hostmaster: "hostmaster.omniname.test",
};
const TYPES = ["A", "AAAA", "TXT", "CNAME", "MX", "SOA", "NS"];
/** Names that exist only because names below them do (RFC 8020: NODATA, not NXDOMAIN). */
const EMPTY_NON_TERMINALS = ["deep.wallet", "deep.crypto"];

/** A generated world: every record kind, collisions, CNAMEs in and out of the zone, IDN labels. */
function world(): Array<{ name: string; score: number; records: Record<string, string> }> {
  const out: Array<{ name: string; score: number; records: Record<string, string> }> = [];
  for (let i = 0; i < 160; i++) {
    const tld = i % 4 === 0 ? "crypto" : "wallet";
    const name = i % 23 === 0 ? `café${i}.${tld}` : `n${i}.${tld}`;
    const records: Record<string, string> = { "token.ETH.0": `0x${i.toString(16).padStart(40, "0")}` };
    if (i % 2 === 0) records["record.A.0"] = `10.0.${i >> 8}.${i & 255}`;
    if (i % 2 === 0 && i % 3 === 0) records["record.A.1"] = `10.1.${i >> 8}.${i & 255}`;
    if (i % 3 === 0) records["record.AAAA.0"] = `2001:db8::${i.toString(16)}`;
    if (i % 5 === 0) records["record.MX.0"] = `10 mx${i}.example.com`;
    if (i % 7 === 0) records["content.IPFS.0"] = `QmHash${i}`;
    if (i % 11 === 0) records["record.TXT.0"] = `say "${i}"`;
    if (i % 13 === 0) records["record.A.ttl"] = "60";
    if (i % 17 === 0) records["record.CNAME.0"] = `n${i + 1}.${tld}`;
    if (i % 19 === 0) records["record.CNAME.0"] = "elsewhere.example.net";
    out.push({ name, score: 50, records });
    // A collision: a lower-scored domain of the same name that must never be answered.
    if (i % 9 === 0)
      out.push({ name, score: 20, records: { "record.A.0": "192.0.2.99", "record.TXT.0": "loser" } });
  }
  out.push({ name: "x.deep.wallet", score: 50, records: { "record.A.0": "10.9.9.9" } });
  // deep.crypto is a domain without records: it exists only through its child.
  out.push({ name: "deep.crypto", score: 50, records: {} });
  out.push({ name: "y.deep.crypto", score: 50, records: { "record.TXT.0": "child" } });
  out.push({ name: "chain.wallet", score: 50, records: { "record.CNAME.0": "n17.wallet" } });
  return out;
}

/** The answer, or null when none came within a second (a lost or dropped query is a difference). */
function within(p: Promise<Buffer>): Promise<Buffer | null> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<null>((r) => {
      timer = setTimeout(() => r(null), 1000);
    }),
  ]);
}

/** What must match between two servers: rcode, AA, answer and authority as sorted sets (TTL aside). */
function comparable(buf: Buffer): string {
  const p = dnsPacket.decode(buf);
  const rr = (a: dnsPacket.Answer) => {
    const d = (a as { data: unknown }).data;
    // Names inside RDATA compare without regard to case (RFC 4343): NSD compresses a CNAME's
    // target against the question, so it takes the question's 0x20 case; we write it in lower case.
    const data =
      a.type === "TXT"
        ? (d as Buffer[]).map((b) => b.toString("hex")).join(",")
        : a.type === "CNAME" || a.type === "NS"
          ? JSON.stringify((d as string).toLowerCase())
          : a.type === "MX"
            ? JSON.stringify({
                ...(d as object),
                exchange: (d as { exchange: string }).exchange.toLowerCase(),
              })
            : JSON.stringify(d);
    return `${a.name.toLowerCase()} ${a.type} ${data}`;
  };
  return JSON.stringify({
    rcode: (p.flags ?? 0) & 0xf,
    aa: p.flag_aa,
    tc: p.flag_tc,
    answer: (p.answers ?? []).map(rr).sort(),
    authority: (p.authorities ?? []).map(rr).sort(),
  });
}

describe("our server and NSD serving our exported zones answer alike", () => {
  let dir: string;
  let store: Store;
  let ours: DnsServer;
  let nsd: ChildProcess;
  let nsdPort = 0;
  let names: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-nsd-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    let n = 1;
    for (const d of world()) {
      const tld = d.name.slice(d.name.lastIndexOf(".") + 1);
      const id = await store.domainMap.upsertDomain(
        testDomain({
          tokenId: tokenIdOf(n++),
          name: d.name,
          sld: d.name.slice(0, d.name.lastIndexOf(".")),
          tld,
          baseScore: d.score,
        }),
      );
      await store.domainMap.replaceRecords(
        id,
        Object.entries(d.records).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value })),
      );
    }
    await store.crawlerLog.setCheckpoint({
      sourceId: "s",
      chainId: 1,
      blockNumber: 77,
      blockHash: "0x1",
      updatedAt: NOW,
      state: "live",
      error: null,
    });
    const resolution = createResolution({ store: store.domainMap, ranker: createScoringRanker() });
    const zonesDir = join(dir, "zones");
    const exported = await exportZones(store, resolution, { ...APEX, outDir: zonesDir, now: NOW });
    names = [...new Set(world().map((d) => d.name))].map((x) =>
      x.startsWith("café") ? `xn--caf${x.slice(4, x.indexOf("."))}-dma${x.slice(x.indexOf("."))}` : x,
    );

    nsdPort = await freePort();
    const conf = [
      "server:",
      `  ip-address: 127.0.0.1@${nsdPort}`,
      `  port: ${nsdPort}`,
      '  username: ""',
      '  chroot: ""',
      `  zonesdir: "${zonesDir}"`,
      '  database: ""',
      `  pidfile: "${join(dir, "nsd.pid")}"`,
      `  xfrdfile: "${join(dir, "xfrd.state")}"`,
      `  zonelistfile: "${join(dir, "zone.list")}"`,
      `  logfile: "${join(dir, "nsd.log")}"`,
      "  server-count: 1",
      "  minimal-responses: yes",
      "  refuse-any: no",
      // Response rate limiting would truncate or drop our burst of queries from one address.
      "  rrl-ratelimit: 0",
      "  rrl-whitelist-ratelimit: 0",
      "remote-control:",
      "  control-enable: no",
      ...exported.zones.flatMap((z) => ["zone:", `  name: ${z.tld}`, `  zonefile: "${z.file}"`]),
    ].join("\n");
    writeFileSync(join(dir, "nsd.conf"), `${conf}\n`);
    nsd = spawn("nsd", ["-d", "-c", join(dir, "nsd.conf")], { stdio: "ignore" });

    const lookup = createStoreZoneLookup({ resolution, store, ...APEX, clock: () => NOW });
    ours = await createDnsServer({
      lookup,
      // As the dns role runs: the second round of queries below is answered from it.
      cache: new AnswerCache({ lookup, clock: () => NOW }),
      host: "127.0.0.1",
      port: 0,
      tcpIdleMs: 1000,
      tcpMaxClients: 8,
    });
    // NSD is ready once it answers its SOA.
    const probe = createUdpDnsClient("127.0.0.1", nsdPort);
    try {
      for (;;) {
        const answer = await Promise.race([
          probe.ask(buildTestQuery("wallet", "SOA", { id: 1 })),
          new Promise<null>((r) => setTimeout(() => r(null), 200)),
        ]);
        if (answer !== null) break;
      }
    } finally {
      probe.close();
    }
  }, 60_000);

  afterAll(async () => {
    await ours?.close();
    if (nsd && nsd.exitCode === null) {
      const exited = new Promise((r) => nsd.once("exit", r));
      nsd.kill("SIGTERM");
      await exited;
    }
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("over ≥ 1,000 queries: every served name × A/AAAA/TXT/CNAME/MX/SOA/NS, absent names and types", async () => {
    const queries: Array<[string, string]> = [];
    for (const name of [...names, "wallet", "crypto"])
      for (const t of [...TYPES, "SRV", "CAA"]) queries.push([name, t]);
    for (let i = 0; i < 100; i++)
      queries.push([`absent${i}.${i % 2 ? "wallet" : "crypto"}`, TYPES[i % TYPES.length]]);
    for (const name of EMPTY_NON_TERMINALS) for (const t of TYPES) queries.push([name, t]);
    expect(queries.length).toBeGreaterThanOrEqual(1000);

    const a = createUdpDnsClient("127.0.0.1", ours.port);
    const b = createUdpDnsClient("127.0.0.1", nsdPort);
    const differences: string[] = [];
    try {
      let id = 100;
      // Twice: computed, then from our answer cache (the second round in upper case, 0x20-style).
      for (const [name, type] of [...queries, ...queries.map(([n, t]) => [n.toUpperCase(), t])]) {
        const q = buildTestQuery(name, type, { id: id++ & 0xffff, udpSize: 4096 });
        const [mine, theirs] = await Promise.all([within(a.ask(q)), within(b.ask(q))]);
        const x = mine === null ? "no answer" : comparable(mine);
        const y = theirs === null ? "no answer" : comparable(theirs);
        if (x !== y) differences.push(`${name} ${type}\n  ours: ${x}\n  nsd:  ${y}`);
      }
    } finally {
      a.close();
      b.close();
    }
    expect(differences).toEqual([]);
  }, 120_000);
});

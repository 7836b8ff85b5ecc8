import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScoringRanker } from "../resolution/rank.js";
import { createResolution } from "../resolution/resolution.js";
import { createStore } from "../store/create-store.js";
import type { Store } from "../store/store.js";
import { testDomain, tokenIdOf } from "../../test/helpers/store-world.js";
import { buildTestQuery, decodeTestAnswer } from "./dns.testing.js";
import { AnswerCache } from "./answer-cache.js";
import { readFrames, tcpFrame } from "./dns-client.testing.js";
import { createDnsServer, type DnsServer } from "./dns-server.js";
import { createStoreZoneLookup } from "./store-zone-lookup.js";

const run = promisify(execFile);
const NOW = Date.UTC(2025, 0, 1);

async function addDomain(
  store: Store,
  n: number,
  name: string,
  records: Record<string, string>,
): Promise<void> {
  const [sld, tld] = [name.slice(0, name.lastIndexOf(".")), name.slice(name.lastIndexOf(".") + 1)];
  const id = await store.domainMap.upsertDomain(testDomain({ tokenId: tokenIdOf(n), name, sld, tld }));
  await store.domainMap.replaceRecords(
    id,
    Object.entries(records).map(([key, value]) => ({ key, value, nativeKey: key, nativeValue: value })),
  );
}

/** Opens a TCP connection; resolves with the socket and a promise of its next frame or its close. */
function openTcp(port: number): Promise<{ socket: Socket; next: () => Promise<Buffer | "closed"> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port }, () =>
      resolve({ socket, next: readFrames(socket).next }),
    );
    socket.on("error", reject);
  });
}

describe("DNS server over UDP and TCP, judged by dig and kdig", () => {
  let dir: string;
  let store: Store;
  let server: DnsServer;
  let dig: (...args: string[]) => Promise<string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-dns-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    await addDomain(store, 1, "alice.wallet", { "record.A.0": "10.0.0.1", "token.ETH.0": "0xa11ce" });
    await addDomain(
      store,
      2,
      "big.wallet",
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`record.TXT.${i}`, `${i}`.padEnd(60, "x")])),
    );
    // Chain names under TLDs of the ICANN root: omniname never answers for those TLDs.
    await addDomain(store, 3, "acme.com", { "record.A.0": "203.0.113.5" });
    await addDomain(store, 4, "shop.org", { "record.A.0": "203.0.113.6" });
    const lookup = createStoreZoneLookup({
      resolution: createResolution({ store: store.domainMap, ranker: createScoringRanker() }),
      store,
      nameServers: ["ns1.omniname.test"],
      hostmaster: "hostmaster.omniname.test",
      clock: () => NOW,
    });
    server = await createDnsServer({
      lookup,
      host: "127.0.0.1",
      port: 0,
      tcpIdleMs: 300,
      tcpMaxClients: 2,
      cache: new AnswerCache({ lookup, clock: () => NOW }),
    });
    dig = async (...args) =>
      (await run("dig", [`@127.0.0.1`, "-p", String(server.port), "+norec", "+time=5", "+tries=1", ...args]))
        .stdout;
  });

  afterAll(async () => {
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("dig over UDP: an authoritative answer", async () => {
    const out = await dig("alice.wallet", "A");
    expect(out).toMatch(/status: NOERROR/);
    expect(out).toMatch(/flags: qr aa;/);
    expect(out).toMatch(/alice\.wallet\.\s+300\s+IN\s+A\s+10\.0\.0\.1/);
  });

  it("kdig over TCP: the same answer; NXDOMAIN with the SOA", async () => {
    const { stdout } = await run("kdig", [
      `@127.0.0.1`,
      "-p",
      String(server.port),
      "+tcp",
      "+norec",
      "alice.wallet",
      "TXT",
    ]);
    expect(stdout).toMatch(/alice\.wallet\.\s+300\s+IN\s+TXT\s+"token\.ETH=0xa11ce"/);
    const nx = await run("kdig", [`@127.0.0.1`, "-p", String(server.port), "+tcp", "nobody.wallet", "A"]);
    expect(nx.stdout).toMatch(/status: NXDOMAIN/);
    expect(nx.stdout).toMatch(
      /wallet\.\s+300\s+IN\s+SOA\s+ns1\.omniname\.test\. hostmaster\.omniname\.test\./,
    );
  });

  it("answers a name written after start from the live map, without a reload", async () => {
    expect(await dig("carol.wallet", "A")).toMatch(/status: NXDOMAIN/);
    await addDomain(store, 3, "carol.wallet", { "record.A.0": "10.0.0.3" });
    expect(await dig("carol.wallet", "A")).toMatch(/carol\.wallet\.\s+300\s+IN\s+A\s+10\.0\.0\.3/);
  });

  it("TC over UDP without EDNS; dig retries over TCP and gets the whole RRset", async () => {
    const udp = await dig("+noedns", "+ignore", "big.wallet", "TXT");
    expect(udp).toMatch(/flags: qr aa tc;/);
    const retried = await dig("+noedns", "big.wallet", "TXT");
    expect(retried).toMatch(/ANSWER: 30,/);
  });

  it("0x20: the answer keeps the question's case", async () => {
    expect(await dig("AlIcE.wAlLeT", "A")).toMatch(/AlIcE\.wAlLeT\.\s+300\s+IN\s+A\s+10\.0\.0\.1/);
  });

  it("REFUSED for a TLD it does not serve", async () => {
    expect(await dig("example.wallet2", "A")).toMatch(/status: REFUSED/);
  });

  it("REFUSED for a TLD of the ICANN root and every name under it, even names the map holds", async () => {
    for (const [name, type] of [
      ["www.example.com", "A"],
      ["acme.com", "A"],
      ["com", "SOA"],
      ["com", "NS"],
      ["shop.org", "A"],
      ["org", "SOA"],
    ]) {
      const out = await dig(name, type);
      expect(out, `${name} ${type}`).toMatch(/status: REFUSED/);
      expect(out, `${name} ${type}`).not.toMatch(/AUTHORITY: [1-9]/);
    }
    const { stdout } = await run("kdig", [
      `@127.0.0.1`,
      "-p",
      String(server.port),
      "+tcp",
      "www.example.com",
      "A",
    ]);
    expect(stdout).toMatch(/status: REFUSED/);
    expect(await dig("alice.wallet", "A")).toMatch(/status: NOERROR/);
  });

  it("TCP: pipelined queries, a 0-length frame ignored, then the idle timeout closes the connection", async () => {
    const c = await openTcp(server.port);
    c.socket.write(
      Buffer.concat([
        tcpFrame(Buffer.alloc(0)),
        tcpFrame(buildTestQuery("alice.wallet", "A", { id: 1 })),
        tcpFrame(buildTestQuery("alice.wallet", "TXT", { id: 2 })),
      ]),
    );
    const ids = [
      decodeTestAnswer((await c.next()) as Buffer).id,
      decodeTestAnswer((await c.next()) as Buffer).id,
    ];
    expect(ids.sort()).toEqual([1, 2]);
    // Nothing more is sent: the server closes the idle connection.
    expect(await c.next()).toBe("closed");
  });

  it("TCP: a connection beyond the cap is closed at once; the others keep working", async () => {
    const a = await openTcp(server.port);
    const b = await openTcp(server.port);
    a.socket.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 7 })));
    b.socket.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 8 })));
    expect(decodeTestAnswer((await a.next()) as Buffer).id).toBe(7);
    expect(decodeTestAnswer((await b.next()) as Buffer).id).toBe(8);
    const c = await openTcp(server.port);
    c.socket.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 9 })));
    expect(await c.next()).toBe("closed");
    a.socket.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 10 })));
    expect(decodeTestAnswer((await a.next()) as Buffer).id).toBe(10);
    a.socket.destroy();
    b.socket.destroy();
  });
});

import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import punycode from "punycode/punycode.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerCache } from "../../src/dns/answer-cache.js";
import { createDnsServer, type DnsServer } from "../../src/dns/dns-server.js";
import { createStoreZoneLookup } from "../../src/dns/store-zone-lookup.js";
import { exportZones } from "../../src/dns/zone-export.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createResolution } from "../../src/resolution/resolution.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { type SnsEndpoint, snsPass, startSnsEndpoint } from "../helpers/sns-world.js";

const run = promisify(execFile);
const SETTINGS = { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test" };

/**
 * `.sol` names in DNS: `.sol` is no TLD of the ICANN root, so the SNS names are a zone like any
 * other (docs/dns.md). The SNS source builds the map from the devnet's Solana endpoint (SNS
 * records A, AAAA, CNAME and TXT on `record.*` keys); `zone export` writes `sol.zone`, which
 * kzonecheck accepts, and the DNS server answers kdig from the same map.
 */
describe("DNS for .sol names, judged by kdig", () => {
  let sns: SnsEndpoint;
  let dir: string;
  let store: Store;
  let server: DnsServer;
  const kdig = async (...args: string[]) =>
    (await run("kdig", ["@127.0.0.1", "-p", String(server.port), "+norec", "+time=5", "+retry=0", ...args]))
      .stdout;

  beforeAll(async () => {
    sns = await startSnsEndpoint({ hostile: false });
    // eve.sol gets every DNS record SNS has, as a Records V2 owner writes them (CNAME and TXT in
    // punycode, as the SDK serializes them).
    const utf8 = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
    sns.writer.setRecordV2(
      "eve.sol",
      "AAAA",
      Uint8Array.from(Buffer.from("20010db8000000000000000000000007", "hex")),
    );
    sns.writer.setRecordV2("eve.sol", "TXT", utf8(punycode.encode("v=sol eve")));
    sns.writer.setRecordV2("pay.alice.sol", "CNAME", utf8(punycode.encode("alice.example.com")));
    dir = mkdtempSync(join(tmpdir(), "omniname-sns-dns-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    await snsPass(sns, store);
    const lookup = createStoreZoneLookup({
      resolution: createResolution({ store: store.domainMap, ranker: createScoringRanker() }),
      store,
      ...SETTINGS,
      clock: Date.now,
    });
    server = await createDnsServer({
      lookup,
      host: "127.0.0.1",
      port: 0,
      tcpIdleMs: 1_000,
      tcpMaxClients: 4,
      cache: new AnswerCache({ lookup, clock: Date.now }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await store?.close();
    await sns?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("exports a sol zone with the SNS names' records that kzonecheck accepts", async () => {
    const out = join(dir, "zones");
    const result = await exportZones(
      store,
      createResolution({ store: store.domainMap, ranker: createScoringRanker() }),
      {
        ...SETTINGS,
        outDir: out,
        now: Date.now(),
      },
    );
    expect(result.zones.map((z) => z.tld)).toEqual(["sol"]);
    expect(result.icann).toEqual([]);
    const file = join(out, "sol.zone");
    const knot = spawnSync("kzonecheck", ["-o", "sol", file], { encoding: "utf8" });
    expect(knot.status, knot.stdout + knot.stderr).toBe(0);
    const zone = readFileSync(file, "utf8");
    expect(zone).toMatch(/^alice\.sol\.\s+\d+\s+IN\s+A\s+192\.0\.2\.10$/m);
    expect(zone).toMatch(/^dave\.sol\.\s+\d+\s+IN\s+A\s+198\.51\.100\.7$/m);
    expect(zone).toMatch(/^eve\.sol\.\s+\d+\s+IN\s+AAAA\s+2001:db8::7$/m);
    expect(zone).toMatch(/^eve\.sol\.\s+\d+\s+IN\s+TXT\s+"v=sol eve"$/m);
    expect(zone).toMatch(/^pay\.alice\.sol\.\s+\d+\s+IN\s+CNAME\s+alice\.example\.com\.$/m);
  });

  it("answers .sol names over UDP and TCP from the map", async () => {
    const a = await kdig("alice.sol", "A");
    expect(a).toMatch(/status: NOERROR/);
    expect(a).toMatch(/Flags: qr aa;/);
    expect(a).toMatch(/alice\.sol\.\s+\d+\s+IN\s+A\s+192\.0\.2\.10/);
    expect(await kdig("+tcp", "eve.sol", "AAAA")).toMatch(/eve\.sol\.\s+\d+\s+IN\s+AAAA\s+2001:db8::7/);
    expect(await kdig("eve.sol", "TXT")).toMatch(/eve\.sol\.\s+\d+\s+IN\s+TXT\s+"v=sol eve"/);
    expect(await kdig("pay.alice.sol", "A")).toMatch(
      /pay\.alice\.sol\.\s+\d+\s+IN\s+CNAME\s+alice\.example\.com\./,
    );
    const nx = await kdig("nobody.sol", "A");
    expect(nx).toMatch(/status: NXDOMAIN/);
    expect(nx).toMatch(/sol\.\s+\d+\s+IN\s+SOA\s+ns1\.omniname\.test\. hostmaster\.omniname\.test\./);
  });

  it("follows a record the owner changes on Solana after the next pass", async () => {
    sns.writer.setRecordV2("dave.sol", "A", Uint8Array.of(203, 0, 113, 9));
    await snsPass(sns, store);
    expect(await kdig("dave.sol", "A")).toMatch(/dave\.sol\.\s+\d+\s+IN\s+A\s+203\.0\.113\.9/);
  });
});

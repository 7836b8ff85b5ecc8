import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateDnssecKeyPem } from "../../src/dns/dnssec-keys.js";
import { createPublicZoneLookup } from "../../src/dns/dns-role.js";
import { buildTestQuery, decodeTestAnswer } from "../../src/dns/dns.testing.js";
import { answerQuery } from "../../src/dns/query-handler.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR } from "./helpers/world.js";

const b64url = (b: Buffer) => b.toString("base64url");

describe("DoH (RFC 8484) at /dns-query", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("GET ?dns=: the wire answer, byte-identical to the UDP server's, max-age from the smallest TTL", async () => {
    const query = buildTestQuery("alice.wallet", "A", { id: 0 });
    const res = await t.app.inject({ url: `/dns-query?dns=${b64url(query)}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/dns-message");
    expect(res.headers["cache-control"]).toBe("max-age=300");
    const udp = await answerQuery(query, createPublicZoneLookup(t.ctx), "udp");
    expect(res.rawPayload.equals(udp!)).toBe(true);
    expect(decodeTestAnswer(res.rawPayload).answer).toEqual([
      "alice.wallet. 300 IN A 192.0.2.1",
      "alice.wallet. 300 IN A 192.0.2.2",
      "alice.wallet. 300 IN A 192.0.2.10",
    ]);
  });

  it("POST application/dns-message: the same bytes as GET", async () => {
    const query = buildTestQuery("alice.wallet", "TXT", { id: 0 });
    const get = await t.app.inject({ url: `/dns-query?dns=${b64url(query)}` });
    const post = await t.app.inject({
      method: "POST",
      url: "/dns-query",
      headers: { "content-type": "application/dns-message" },
      payload: query,
    });
    expect(post.statusCode).toBe(200);
    expect(post.rawPayload.equals(get.rawPayload)).toBe(true);
  });

  it("a negative answer: max-age is the SOA's negative TTL", async () => {
    const res = await t.app.inject({
      url: `/dns-query?dns=${b64url(buildTestQuery("nobody.wallet", "A", { id: 0 }))}`,
    });
    expect(decodeTestAnswer(res.rawPayload).rcode).toBe("NXDOMAIN");
    expect(res.headers["cache-control"]).toBe("max-age=300");
  });

  it("the JSON form, with the public resolvers' field names", async () => {
    const res = await t.app.inject({ url: "/dns-query?name=alice.wallet&type=TXT" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/dns-json/);
    expect(res.json()).toEqual({
      Status: 0,
      TC: false,
      RD: true,
      RA: false,
      AD: false,
      CD: false,
      Question: [{ name: "alice.wallet.", type: 16 }],
      Answer: [
        { name: "alice.wallet.", type: 16, TTL: 300, data: '"https://alice.example.com/verify"' },
        { name: "alice.wallet.", type: 16, TTL: 300, data: '"redirect=https://alice.example.com"' },
        {
          name: "alice.wallet.",
          type: 16,
          TTL: 300,
          data: `"token.ETH=${"0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"}"`,
        },
      ],
    });
    const nx = (await t.app.inject({ url: "/dns-query?name=nobody.wallet&type=1" })).json();
    expect(nx.Status).toBe(3);
    expect(nx.Authority[0]).toMatchObject({ name: "wallet.", type: 6, TTL: 300 });
  });

  it.each<[string, () => Promise<{ statusCode: number }>, number]>([
    ["dns that is not base64url", () => t.app.inject({ url: "/dns-query?dns=AAA+AAA" }), 400],
    [
      "dns with padding",
      () => t.app.inject({ url: `/dns-query?dns=${b64url(buildTestQuery("a.wallet", "A"))}==` }),
      400,
    ],
    ["a message shorter than a header", () => t.app.inject({ url: "/dns-query?dns=AAAA" }), 400],
    ["neither dns nor name", () => t.app.inject({ url: "/dns-query" }), 400],
    ["an unknown JSON type", () => t.app.inject({ url: "/dns-query?name=alice.wallet&type=BOGUS" }), 400],
    [
      "POST of another media type",
      () =>
        t.app.inject({
          method: "POST",
          url: "/dns-query",
          headers: { "content-type": "text/plain" },
          payload: "x",
        }),
      415,
    ],
    [
      "POST over 65,535 bytes",
      () =>
        t.app.inject({
          method: "POST",
          url: "/dns-query",
          headers: { "content-type": "application/dns-message" },
          payload: Buffer.alloc(70_000),
        }),
      413,
    ],
  ])("%s -> %i", async (_label, send, status) => {
    expect((await send()).statusCode).toBe(status);
  });
});

describe("a project's own DoH at /svc/api/v1/dns-query", () => {
  let t: TestApp;
  const V1_DOH = "/svc/api/v1/dns-query";

  beforeAll(async () => {
    t = await createTestApp({ ranker: createScoringRanker(), app: { console: true } });
    // The project serves no FNS names: alice.wallet is then its UNS domain (owned by bob).
    await t.store.projects.updateProjectSettings(t.projectId, { providers: { disabled: ["NAMESPACE_A"] } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("needs the project's API key", async () => {
    const res = await t.app.inject({ url: `${V1_DOH}?name=alice.wallet&type=TXT` });
    expect(res.statusCode).toBe(401);
  });

  it("answers under the project's settings, with the plan's limits, and counts the request in usage", async () => {
    const query = buildTestQuery("alice.wallet", "TXT", { id: 0 });
    const mine = await t.app.inject({ url: `${V1_DOH}?dns=${b64url(query)}`, headers: { "api-key": t.key } });
    expect(mine.statusCode).toBe(200);
    expect(mine.headers.ratelimit).toMatch(/"quota";r=\d+/);
    expect(decodeTestAnswer(mine.rawPayload).answer).toEqual([
      `alice.wallet. 300 IN TXT "token.ETH=${ADDR.bob}"`,
    ]);
    const json = await t.app.inject({
      url: `${V1_DOH}?name=alice.wallet&type=A`,
      headers: { "api-key": t.key },
    });
    expect(json.json().Answer).toBeUndefined();
    // The public endpoint ranks without the project's rules: the FNS domain, with its A records.
    const pub = await t.app.inject({ url: "/dns-query?name=alice.wallet&type=A" });
    expect(pub.json().Answer).toHaveLength(3);

    await t.app.close(); // flushes the usage counters
    const rows = await t.store.accounts
      .selectFrom("usage_counters")
      .selectAll()
      .where("project_id", "=", t.projectId)
      .where("metric", "=", "requests")
      .execute();
    expect(rows.map((r) => [r.endpoint, Number(r.count)])).toEqual([["dns-query", 2]]);
  });
});

describe("DoH with DNSSEC=true", () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), "omniname-doh-dnssec-"));

  beforeAll(async () => {
    const keyFile = join(dir, "dnssec.pem");
    writeFileSync(keyFile, generateDnssecKeyPem(), { mode: 0o600 });
    t = await createTestApp({ config: { dnssec: true, dnssecKeyFile: keyFile } });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a query with DO gets the signed answer (the UDP server's bytes); without DO, unsigned", async () => {
    const query = buildTestQuery("alice.wallet", "A", { id: 0, udpSize: 1232, dnssecOk: true });
    const res = await t.app.inject({ url: `/dns-query?dns=${b64url(query)}` });
    expect(res.statusCode).toBe(200);
    const types = (buf: Buffer) => decodeTestAnswer(buf).answer.map((rr) => rr.split(" ")[3]);
    expect(types(res.rawPayload)).toEqual(["A", "A", "A", "RRSIG"]);
    const plain = await t.app.inject({
      url: `/dns-query?dns=${b64url(buildTestQuery("alice.wallet", "A", { id: 0, udpSize: 1232 }))}`,
    });
    expect(types(plain.rawPayload)).toEqual(["A", "A", "A"]);
    const nx = await t.app.inject({
      url: `/dns-query?dns=${b64url(buildTestQuery("nobody-at-all.wallet", "A", { id: 0, udpSize: 1232, dnssecOk: true }))}`,
    });
    expect(decodeTestAnswer(nx.rawPayload).rcode).toBe("NOERROR");
    expect(decodeTestAnswer(nx.rawPayload).ns.map((rr) => rr.split(" ")[3])).toEqual([
      "SOA",
      "RRSIG",
      "NSEC",
      "RRSIG",
    ]);
  });
});

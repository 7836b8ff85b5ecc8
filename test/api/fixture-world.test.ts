import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FixtureDomain, fixtureWorld, fixtureBaseTime, NOTABLE } from "../../src/devnet/fixtures.js";
import { fixtureRecords, importFixtures } from "../../src/devnet/import-fixtures.js";
import { EMPTY_BLOCKLIST } from "../../src/scoring/scoring-lists.js";
import { rescoreAll } from "../../src/jobs/rescore.job.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { compareRecordKeys } from "../../src/resolution/record-shape.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";
// A year after the fixtures' epoch: the expired names are past every grace period, the others live.
const NOW = fixtureBaseTime() + 365 * 24 * 3_600_000;
const live = (d: FixtureDomain) => d.expiresAt === null || d.expiresAt > NOW;
const names = [...new Set(fixtureWorld().domains.map((d) => d.name))];
const key = (r: { provider: string; network: string }) => `${r.provider}/${r.network}`;

interface Wire {
  domain: string;
  fullQualifiedDomain: string;
  provider: string;
  network: string;
  ownerAddress: string;
  score: number;
  records: Record<string, string>;
  info: Record<string, unknown>;
}

// The whole fixture world (the devnet's demo data), imported as the crawler would write it and
// rescored, served by the production ranker: every name, every owner, on both backends.
describe.each<Backend>(["sqlite", "postgres"])("the fixture world through API v1 on %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      backend,
      now: NOW,
      ranker: createScoringRanker(),
      async seed(store) {
        await importFixtures(store, fixtureWorld());
        await rescoreAll(store, {
          csamTerms: [],
          blocklist: EMPTY_BLOCKLIST,
          kycOwners: new Set(),
          icannTlds: new Set(["com", "org"]),
        });
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it(`deep-resolve returns exactly the live domains of each of the ${names.length} names, best first, and resolve returns the first`, async () => {
    for (const name of names) {
      const expected = fixtureWorld().domains.filter((d) => d.name === name && live(d));
      const deep = await t.get(`${V1}/deep-resolve?domain=${encodeURIComponent(name)}`);
      expect(deep.statusCode, name).toBe(200);
      const data = deep.json().data as Wire[];
      expect(data.map(key).sort(), name).toEqual(expected.map(key).sort());
      const scores = data.map((r) => r.score);
      expect(scores, name).toEqual([...scores].sort((a, b) => b - a));
      const one = await t.get(`${V1}/resolve?domain=${encodeURIComponent(name)}`);
      if (expected.length === 0) {
        expect(one.statusCode, name).toBe(404);
        continue;
      }
      expect(one.statusCode, name).toBe(200);
      expect(one.json().data, name).toEqual(data[0]);
    }
  });

  it("serves each domain's records mapped from its native records, in key order", async () => {
    for (const d of fixtureWorld().domains.filter(live)) {
      const res = await t.get(
        `${V1}/resolve?domain=${encodeURIComponent(d.name)}&provider=${d.provider}&network=${d.network}`,
      );
      expect(res.statusCode, d.name).toBe(200);
      const r = res.json().data as Wire;
      expect(r.ownerAddress, d.name).toBe(d.owner);
      expect(r.domain, d.name).toBe(d.name);
      expect(r.fullQualifiedDomain, d.name).toBe(d.name);
      const want = Object.fromEntries(fixtureRecords(d).map((x) => [x.key, x.value]));
      expect(r.records, d.name).toEqual(want);
      const keys = Object.keys(r.records);
      expect(keys, d.name).toEqual([...keys].sort(compareRecordKeys));
    }
  });

  it.each([
    [NOTABLE.unicodeAscii, NOTABLE.unicode],
    ["XN--CAF-DMA.WALLET", NOTABLE.unicode],
    ["Café.Wallet", NOTABLE.unicode],
    ["xn--mnchen-3ya.wallet", "münchen.wallet"],
    ["STRASSE.x", null],
    ["🚀.ETH", "🚀.eth"],
    [NOTABLE.emojiZwjEns, NOTABLE.emojiZwjEns],
  ])("normalizes %j to %j", async (input, name) => {
    const res = await t.get(`${V1}/resolve?domain=${encodeURIComponent(input)}`);
    if (name === null) {
      expect(res.statusCode).toBe(404);
      return;
    }
    expect(res.statusCode).toBe(200);
    expect(res.json().data.domain).toBe(name);
  });

  it(`reverse-resolve returns each of the ${Object.keys(fixtureWorld().owners).length} owners' live domains, primary names first`, async () => {
    for (const owner of new Set(fixtureWorld().domains.map((d) => d.owner))) {
      const owned = fixtureWorld().domains.filter((d) => d.owner === owner && live(d));
      const res = await t.get(
        `${V1}/reverse-resolve?walletAddress=${owner.toUpperCase().replace("0X", "0x")}`,
      );
      expect(res.statusCode, owner).toBe(200);
      const data = res.json().data as Wire[];
      expect(data.map((r) => `${key(r)}/${r.domain}`).sort(), owner).toEqual(
        owned.map((d) => `${key(d)}/${d.name}`).sort(),
      );
      const primaries = owned.filter((d) => d.reverse).length;
      const isPrimary = (r: Wire) => owned.some((d) => d.reverse && d.name === r.domain && key(d) === key(r));
      expect(data.slice(0, primaries).every(isPrimary), owner).toBe(true);
      const rest = data.slice(primaries);
      for (let i = 1; i < rest.length; i++) {
        const [a, b] = [rest[i - 1], rest[i]];
        expect(a.score > b.score || (a.score === b.score && a.domain <= b.domain), owner).toBe(true);
      }
      for (const r of data) expect("smartContractAddress" in r.info).toBe(false);
    }
  });
});

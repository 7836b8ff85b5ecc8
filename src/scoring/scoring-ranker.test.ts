import { describe, expect, it } from "vitest";
import { DAY, domain, T0 } from "../../test/scoring/helpers/scoring-fixtures.js";
import type { DomainWithRecords } from "../domain/types.js";
import { parseGeoBlockedWords } from "./geography.js";
import { type RankContext, createScoringRanker } from "./scoring-ranker.js";

const NOW = T0 + 10 * DAY; // young names: no age bonus
const ranker = createScoringRanker({ geoBlockedWords: parseGeoBlockedWords('{ "DE": ["casino"] }') });

function ctx(over: Partial<RankContext> = {}): RankContext {
  return { projectSettings: {}, country: null, now: NOW, explain: false, ...over };
}

function order(list: DomainWithRecords[], c: Partial<RankContext> = {}): string[] {
  return ranker.rank(list, ctx(c)).map((r) => `${r.domain.provider}/${r.domain.network}`);
}

// One name in three namespaces, as collisions look in the store.
const a = domain({ provider: "NAMESPACE_A", network: "POLYGON", baseScore: 80, registeredAt: T0 });
const b = domain({ provider: "NAMESPACE_B", network: "ETHEREUM", baseScore: 60, registeredAt: T0 + DAY });
const bPoly = domain({ provider: "NAMESPACE_B", network: "POLYGON", baseScore: 60, registeredAt: T0 + DAY });
const c = domain({ provider: "NAMESPACE_C", network: "ETHEREUM", baseScore: 55, registeredAt: T0 + 2 * DAY });

describe("scoring ranker: ordering", () => {
  it.each([
    {
      title: "by score without project rules",
      settings: {},
      want: ["NAMESPACE_A/POLYGON", "NAMESPACE_B/ETHEREUM", "NAMESPACE_B/POLYGON", "NAMESPACE_C/ETHEREUM"],
    },
    {
      title: "a provider priority puts the preferred first",
      settings: { providerPriority: ["NAMESPACE_C"] },
      want: ["NAMESPACE_C/ETHEREUM", "NAMESPACE_A/POLYGON", "NAMESPACE_B/ETHEREUM", "NAMESPACE_B/POLYGON"],
    },
    {
      title: "a priority list orders every listed provider",
      settings: { providerPriority: ["NAMESPACE_B", "NAMESPACE_C"] },
      want: ["NAMESPACE_B/ETHEREUM", "NAMESPACE_B/POLYGON", "NAMESPACE_C/ETHEREUM", "NAMESPACE_A/POLYGON"],
    },
    {
      title: "a domain exception always wins, even over the priority",
      settings: {
        providerPriority: ["NAMESPACE_C"],
        exceptions: [{ domain: "alice.wallet", provider: "NAMESPACE_B", network: "POLYGON" }],
      },
      want: ["NAMESPACE_B/POLYGON", "NAMESPACE_C/ETHEREUM", "NAMESPACE_A/POLYGON", "NAMESPACE_B/ETHEREUM"],
    },
    {
      title: "a TLD exception",
      settings: { exceptions: [{ tld: "wallet", provider: "NAMESPACE_C" }] },
      want: ["NAMESPACE_C/ETHEREUM", "NAMESPACE_A/POLYGON", "NAMESPACE_B/ETHEREUM", "NAMESPACE_B/POLYGON"],
    },
    {
      title: "a disabled provider is excluded",
      settings: { providers: { disabled: ["NAMESPACE_A"] } },
      want: ["NAMESPACE_B/ETHEREUM", "NAMESPACE_B/POLYGON", "NAMESPACE_C/ETHEREUM"],
    },
    {
      title: "enabled networks exclude the others",
      settings: { networks: { enabled: ["POLYGON"] } },
      want: ["NAMESPACE_A/POLYGON", "NAMESPACE_B/POLYGON"],
    },
  ])("$title", ({ settings, want }) => {
    expect(order([c, bPoly, b, a], { projectSettings: settings })).toEqual(want);
    // Deterministic whatever the input order.
    expect(order([a, b, bPoly, c], { projectSettings: settings })).toEqual(want);
  });

  it("breaks ties by registration, then provider order, then network order", () => {
    const x = domain({ provider: "NAMESPACE_B", network: "POLYGON", baseScore: 70, registeredAt: T0 });
    const y = domain({ provider: "NAMESPACE_B", network: "ETHEREUM", baseScore: 70, registeredAt: T0 });
    const z = domain({ provider: "NAMESPACE_A", network: "BSC", baseScore: 70, registeredAt: T0 });
    const w = domain({ provider: "NAMESPACE_A", network: "AURORA", baseScore: 70, registeredAt: T0 - 1 });
    expect(order([x, y, z, w])).toEqual([
      "NAMESPACE_A/AURORA",
      "NAMESPACE_A/BSC",
      "NAMESPACE_B/ETHEREUM",
      "NAMESPACE_B/POLYGON",
    ]);
  });

  it("orders several names by score too (reverse-resolve)", () => {
    const other = domain({ name: "zed.x", provider: "NAMESPACE_B", network: "ETHEREUM", baseScore: 90 });
    const low = domain({ name: "low.x", provider: "NAMESPACE_B", network: "ETHEREUM", baseScore: 20 });
    const names = ranker.rank([low, b, other, a], ctx()).map((r) => `${r.domain.name}:${r.score}`);
    expect(names).toEqual(["zed.x:90", "alice.wallet:80", "alice.wallet:60", "low.x:20"]);
  });
});

describe("scoring ranker: exclusions", () => {
  it.each([
    {
      title: "a CSAM-failing name, whatever the settings",
      d: { csamOk: false },
      settings: { includeExpired: true },
      country: null,
      served: false,
    },
    { title: "an expired name", d: { expiresAt: NOW - 1 }, settings: {}, country: null, served: false },
    {
      title: "an expired name when the project includes them",
      d: { expiresAt: NOW - 1 },
      settings: { includeExpired: true },
      country: null,
      served: true,
    },
    {
      title: "a geo-blocked word for the caller's country",
      d: { name: "bestcasino.x" },
      settings: {},
      country: "DE",
      served: false,
    },
    {
      title: "the same name for another country",
      d: { name: "bestcasino.x" },
      settings: {},
      country: "FR",
      served: true,
    },
    {
      title: "a spam name is served, capped",
      d: { spam: true, baseScore: 10 },
      settings: {},
      country: null,
      served: true,
    },
  ])("$title → served: $served", ({ d, settings, country, served }) => {
    const out = ranker.rank([domain(d)], ctx({ projectSettings: settings, country }));
    expect(out.length).toBe(served ? 1 : 0);
  });

  it("tags and penalizes an included expired name", () => {
    const [r] = ranker.rank(
      [domain({ expiresAt: NOW - 1, baseScore: 80 })],
      ctx({ projectSettings: { includeExpired: true } }),
    );
    expect(r.tags).toContain("expired");
    expect(r.score).toBe(60);
  });
});

describe("scoring ranker: scores and explain", () => {
  it("adds the age bonus at query time", () => {
    const [r] = ranker.rank([domain({ baseScore: 70, registeredAt: T0 })], ctx({ now: T0 + 400 * DAY }));
    expect(r.score).toBe(74);
  });

  it("keeps a spam domain under the cap even with a priority bonus", () => {
    const [r] = ranker.rank(
      [domain({ baseScore: 10, spam: true, tags: ["spam:blocklist"] })],
      ctx({ projectSettings: { providerPriority: ["NAMESPACE_A"] } }),
    );
    expect(r.score).toBe(10);
  });

  it.each([
    { title: "no project rules", settings: {} },
    { title: "a priority", settings: { providerPriority: ["NAMESPACE_B", "NAMESPACE_A"] } },
    { title: "an exception", settings: { exceptions: [{ tld: "wallet", provider: "NAMESPACE_B" }] } },
  ])("explains every served record so that the effects add up to the score ($title)", ({ settings }) => {
    const stored = [
      domain({ baseScore: 80, tags: ["origin-provider"], records: [] }),
      domain({
        provider: "NAMESPACE_B",
        network: "ETHEREUM",
        baseScore: 55,
        tags: ["tld-collision:NAMESPACE_A"],
      }),
      domain({
        name: "\u0430lice.wallet",
        baseScore: 10,
        spam: true,
        tags: ["origin-provider", "spam:normalization", "spam:mixed-script"],
      }),
    ];
    const out = ranker.rank(stored, ctx({ projectSettings: settings, explain: true, now: T0 + 200 * DAY }));
    expect(out.length).toBe(3);
    for (const r of out) {
      expect(r.details.length).toBeGreaterThan(0);
      expect(r.details.reduce((s, x) => s + x.effect, 0)).toBe(r.score);
      for (const x of r.details) expect(x.reason).not.toBe("");
    }
  });

  it("returns no details unless asked", () => {
    expect(ranker.rank([a], ctx())[0].details).toEqual([]);
  });

  it("reports a stale stored base score as an adjustment", () => {
    const [r] = ranker.rank([domain({ baseScore: 50, tags: [] })], ctx({ explain: true }));
    expect(r.details.find((x) => x.rule === "base-adjustment")?.effect).toBe(50 - 75);
  });
});

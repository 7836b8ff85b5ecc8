import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureTldOrigins } from "../../src/devnet/fixture-lookups.js";
import { fixtureWorld, NOTABLE } from "../../src/devnet/fixtures.js";
import { createScoringRanker, type RankContext } from "../../src/resolution/rank.js";
import { createResolution, type Resolution } from "../../src/resolution/resolution.js";
import { rescoreAll } from "../../src/jobs/rescore.job.js";
import {
  BLOCKLISTED,
  CSAM_NAME,
  CSAM_OWNER,
  createScenarioWorld,
  GEO_WORDS,
  SCENARIO_NOW,
  SCENARIO_SETTINGS,
  type ScenarioWorld,
} from "./helpers/scenario-world.js";

let world: ScenarioWorld;
let resolution: Resolution;

beforeAll(async () => {
  world = await createScenarioWorld();
  resolution = createResolution({
    store: world.store.domainMap,
    ranker: createScoringRanker({ geoBlockedWords: GEO_WORDS }),
  });
});
afterAll(async () => {
  await world?.close();
});

function ctx(
  settings: keyof typeof SCENARIO_SETTINGS = "none",
  over: Partial<RankContext> = {},
): RankContext {
  return {
    projectSettings: SCENARIO_SETTINGS[settings],
    country: null,
    now: SCENARIO_NOW,
    explain: false,
    ...over,
  };
}

async function winner(
  name: string,
  settings: keyof typeof SCENARIO_SETTINGS = "none",
  over: Partial<RankContext> = {},
) {
  const r = await resolution.resolve(name, {}, ctx(settings, over));
  return r === null ? null : `${r.domain.provider}/${r.domain.network}`;
}

async function order(name: string, settings: keyof typeof SCENARIO_SETTINGS = "none") {
  return (await resolution.deepResolve(name, {}, ctx(settings))).map(
    (r) => `${r.domain.provider}/${r.domain.network}`,
  );
}

describe("stored signals over the fixture world", () => {
  it("gives the origin bonus to exactly the provider that registered first under each TLD", async () => {
    const origins = fixtureTldOrigins();
    let checked = 0;
    for await (const page of world.store.domainMap.iterateDomains()) {
      for (const d of page) {
        if (d.name === CSAM_NAME) continue;
        expect(d.tags.includes("origin-provider"), d.name).toBe(origins.get(d.tld) === d.provider);
        if (d.provider !== origins.get(d.tld))
          expect(d.tags).toContain(`tld-collision:${origins.get(d.tld)}`);
        checked++;
      }
    }
    expect(checked).toBe(fixtureWorld().domains.length);
  });

  it("tags every collision of the world and nothing else", async () => {
    const counts = new Map<string, number>();
    for (const d of fixtureWorld().domains) counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
    for await (const page of world.store.domainMap.iterateDomains()) {
      for (const d of page) expect(d.tags.includes("collision"), d.name).toBe((counts.get(d.name) ?? 0) > 1);
    }
  });

  it("tags and penalizes names under ICANN TLDs", async () => {
    for (const name of NOTABLE.icann) {
      const [d] = await world.store.domainMap.findDomainsByName([name], {});
      expect(d.tags).toContain("icann-collision");
      expect(d.baseScore).toBeLessThan(70);
    }
  });

  it("flags the Cyrillic lookalike of alice.wallet as spam, capped, saying what it imitates", async () => {
    const [fake] = await world.store.domainMap.findDomainsByName([NOTABLE.confusable], {});
    expect(fake.spam).toBe(true);
    expect(fake.baseScore).toBeLessThanOrEqual(10);
    expect(fake.tags).toContain(`confusable:${NOTABLE.imitated}`);
    for (const real of await world.store.domainMap.findDomainsByName([NOTABLE.imitated], {})) {
      expect(real.spam).toBe(false);
      expect(real.tags.some((t) => t.startsWith("confusable:"))).toBe(false);
    }
    const served = await resolution.resolve(NOTABLE.confusable, {}, ctx());
    expect(served?.spam).toBe(true);
    expect(served?.score).toBeLessThanOrEqual(10);
  });

  it("flags a blocklisted name", async () => {
    const [d] = await world.store.domainMap.findDomainsByName([BLOCKLISTED], {});
    expect(d.spam).toBe(true);
    expect(d.tags).toContain("spam:blocklist");
  });

  it("marks the KYC'd owner's domains", async () => {
    const alice = await world.store.domainMap.findDomainsByOwner(fixtureWorld().owners.alice, {});
    expect(alice.length).toBeGreaterThan(2);
    for (const d of alice) expect(d.kyc).toBe(true);
    const [bob] = await world.store.domainMap.findDomainsByName(["bob.eth"], {});
    expect(bob.kyc).toBe(false);
  });

  it("is stable: a second rescoring changes nothing", async () => {
    const again = await rescoreAll(world.store, world.lists);
    expect(again.updated).toBe(0);
    expect(again.scanned).toBe(fixtureWorld().domains.length + 1);
  });
});

describe("collisions through resolution", () => {
  it("across providers: the TLD's origin wins alice.wallet", async () => {
    expect(NOTABLE.sharedTlds.wallet).toBe("NAMESPACE_A");
    expect(await order("alice.wallet")).toEqual(["NAMESPACE_A/POLYGON", "NAMESPACE_B/ETHEREUM"]);
  });

  it("across networks: bob.x, the origin provider first, the earlier registration breaking the tie", async () => {
    expect(await order("bob.x")).toEqual([
      "NAMESPACE_B/ETHEREUM",
      "NAMESPACE_B/POLYGON",
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_A/BSC",
    ]);
  });

  it("a TLD sold by two providers: the later provider's names lose (nova.x)", async () => {
    expect(NOTABLE.sharedTlds.x).toBe("NAMESPACE_B");
    expect(await order("nova.x")).toEqual(["NAMESPACE_B/ETHEREUM", "NAMESPACE_A/BSC"]);
    const [, fns] = await resolution.deepResolve("nova.x", {}, ctx());
    expect(fns.tags).toContain("tld-collision:NAMESPACE_B");
  });

  it("an exception for a domain", async () => {
    expect(await winner("alice.wallet", "domainException")).toBe("NAMESPACE_B/ETHEREUM");
    // Only that name: café.wallet keeps its ordinary winner.
    expect(await winner("café.wallet", "domainException")).toBe("NAMESPACE_A/POLYGON");
  });

  it("an exception for a TLD", async () => {
    expect(await winner("bob.x", "tldException")).toBe("NAMESPACE_A/POLYGON");
    expect(await winner("nova.x", "tldException")).toBe("NAMESPACE_A/BSC");
    expect(await winner("alice.wallet", "tldException")).toBe("NAMESPACE_A/POLYGON");
  });

  it("an exception naming a network", async () => {
    expect(await winner("bob.x", "networkException")).toBe("NAMESPACE_A/BSC");
  });

  it("a disabled provider is never served", async () => {
    expect(await winner("alice.wallet", "disabledProvider")).toBe("NAMESPACE_B/ETHEREUM");
    expect(await winner(NOTABLE.cjk, "disabledProvider")).toBeNull();
    expect(await winner(NOTABLE.cjk)).toBe("NAMESPACE_A/AURORA");
  });

  it("a disabled network is never served", async () => {
    expect(await order("bob.x", "disabledNetwork")).toEqual([
      "NAMESPACE_B/POLYGON",
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_A/BSC",
    ]);
  });

  it("a priority order raises the preferred provider", async () => {
    expect(await winner("moon.wallet")).toBe("NAMESPACE_A/AURORA");
    expect(await winner("moon.wallet", "priority")).toBe("NAMESPACE_B/POLYGON");
    expect(await order("bob.x", "priorityList")).toEqual([
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_A/BSC",
      "NAMESPACE_B/ETHEREUM",
      "NAMESPACE_B/POLYGON",
    ]);
  });

  it("a geo-blocked word excludes the name for one country and not another", async () => {
    expect(await winner("moon.wallet", "none", { country: "DE" })).toBeNull();
    expect(await resolution.deepResolve("moon.wallet", {}, ctx("none", { country: "DE" }))).toEqual([]);
    expect(await winner("moon.wallet", "none", { country: "FR" })).toBe("NAMESPACE_A/AURORA");
    expect(await winner("moon.wallet", "none", { country: null })).toBe("NAMESPACE_A/AURORA");
  });

  it("expired names are excluded unless the project includes them", async () => {
    for (const name of NOTABLE.expired) {
      expect(await winner(name)).toBeNull();
      const r = await resolution.resolve(name, {}, ctx("includeExpired"));
      expect(r?.tags).toContain("expired");
    }
  });

  it("explains the winner with rules whose effects add up to the score", async () => {
    const r = await resolution.resolve("alice.wallet", {}, ctx("domainException", { explain: true }));
    expect(r?.details.map((d) => d.rule)).toEqual([
      "start",
      "provider-weight",
      "origin-provider",
      "records",
      "collision",
      "age",
      "exception",
    ]);
    expect(r?.details.find((d) => d.rule === "origin-provider")).toMatchObject({
      effect: 0,
      reason: expect.stringContaining("originated with NAMESPACE_A"),
    });
    expect(r?.details.find((d) => d.rule === "records")?.reason).toMatch(/^has \d+ records$/);
    for (const [settings, rules] of [
      ["none", ["start", "provider-weight", "origin-provider", "kyc", "records", "collision", "age"]],
      [
        "priority",
        [
          "start",
          "provider-weight",
          "origin-provider",
          "records",
          "collision",
          "age",
          "provider-priority",
          "clamp",
        ],
      ],
    ] as const) {
      const best = await resolution.resolve("alice.wallet", {}, ctx(settings, { explain: true }));
      expect(best?.details.map((d) => d.rule)).toEqual(rules);
      expect(best?.details.reduce((s, d) => s + d.effect, 0)).toBe(best?.score);
    }
    expect(r?.details.reduce((s, d) => s + d.effect, 0)).toBe(r?.score);
    expect(r?.details.find((d) => d.rule === "base-adjustment")).toBeUndefined();
  });
});

describe("a CSAM-failing name", () => {
  it("is stored as failing the screening", async () => {
    const [d] = await world.store.domainMap.findDomainsByName([CSAM_NAME], {});
    expect(d.csamOk).toBe(false);
  });

  it.each(Object.keys(SCENARIO_SETTINGS))(
    "is absent from resolve, deep-resolve and reverse-resolve (settings: %s)",
    async (s) => {
      const c = ctx(s);
      expect(await resolution.resolve(CSAM_NAME, {}, c)).toBeNull();
      expect(await resolution.deepResolve(CSAM_NAME, {}, c)).toEqual([]);
      expect(await resolution.reverseResolve(CSAM_OWNER, {}, c)).toEqual([]);
    },
  );
});

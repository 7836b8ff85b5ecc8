import { describe, expect, it } from "vitest";
import {
  baseContext,
  domain,
  record,
  T0,
  TEST_CSAM_TERMS,
} from "../../test/scoring/helpers/scoring-fixtures.js";
import { BASE_RULES, computeBaseSignals, createBaseSignalsFn, replayContext } from "./base-signals.js";

const OWNER = "0x00000000000000000000000000000000000000aa";

describe("computeBaseSignals", () => {
  it.each([
    {
      title: "a clean name that originated its TLD, with records",
      d: {},
      records: 2,
      ctx: {},
      want: { baseScore: 80, spam: false, csamOk: true, kyc: false, tags: ["origin-provider"] },
    },
    {
      title: "a later provider under a shared TLD",
      d: { provider: "NAMESPACE_B" as const, network: "ETHEREUM" as const },
      records: 0,
      ctx: {
        tldOrigin: () => ({
          provider: "NAMESPACE_A" as const,
          network: "POLYGON" as const,
          registeredAt: T0 - 1,
        }),
      },
      want: { baseScore: 55, spam: false, csamOk: true, kyc: false, tags: ["tld-collision:NAMESPACE_A"] },
    },
    {
      title: "an ICANN TLD with a KYC'd owner and a collision",
      d: { name: "acme.com" },
      records: 1,
      ctx: { kycOwners: new Set([OWNER]), holders: () => 2 },
      want: {
        baseScore: 70,
        spam: false,
        csamOk: true,
        kyc: true,
        tags: ["origin-provider", "icann-collision", "collision"],
      },
    },
    {
      title: "a lookalike is spam and capped",
      d: { name: "\u0430lice.wallet" },
      records: 3,
      ctx: { imitated: () => "alice.wallet" },
      want: {
        baseScore: 10,
        spam: true,
        csamOk: true,
        kyc: false,
        tags: [
          "origin-provider",
          "spam:normalization",
          "spam:mixed-script",
          "spam:confusable",
          "confusable:alice.wallet",
        ],
      },
    },
    {
      title: "a CSAM-failing name",
      d: { name: "zzforbiddenzz.wallet" },
      records: 0,
      ctx: { csamTerms: TEST_CSAM_TERMS },
      want: { baseScore: 75, spam: false, csamOk: false, kyc: false, tags: ["origin-provider", "csam"] },
    },
  ])("$title", ({ d, records, ctx, want }) => {
    const recs = Array.from({ length: records }, (_, i) => record(`token.ETH.${i}`, "0x01"));
    const s = computeBaseSignals(domain(d), recs, baseContext(ctx));
    expect({ baseScore: s.baseScore, spam: s.spam, csamOk: s.csamOk, kyc: s.kyc, tags: s.tags }).toEqual(
      want,
    );
    // The explanation adds up to the score.
    expect(s.details.reduce((a, x) => a + x.effect, 0)).toBe(s.baseScore);
  });

  it("is deterministic", () => {
    const d = domain({ name: "p\u0430ypal.x" });
    const a = computeBaseSignals(d, [], baseContext());
    const b = computeBaseSignals(d, [], baseContext());
    expect(a).toEqual(b);
  });

  it("gives every rule a name and a documented weight", () => {
    const names = BASE_RULES.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const r of BASE_RULES) expect(r.weight).not.toBe("");
  });
});

describe("replayContext", () => {
  it.each([
    { title: "an origin", d: {}, ctx: {} },
    {
      title: "a TLD collision with a KYC'd owner",
      d: { provider: "NAMESPACE_C" as const, network: "ETHEREUM" as const },
      ctx: {
        kycOwners: new Set([OWNER]),
        tldOrigin: () => ({
          provider: "NAMESPACE_B" as const,
          network: "ETHEREUM" as const,
          registeredAt: T0 - 1,
        }),
      },
    },
    {
      title: "a blocklisted lookalike",
      d: { name: "\u0430lice.wallet" },
      ctx: {
        imitated: () => "alice.wallet",
        blocklist: { names: new Set(["\u0430lice.wallet"]), tlds: new Set<string>() },
      },
    },
    { title: "an ICANN collision", d: { name: "shop.com" }, ctx: { holders: () => 3 } },
  ])("rebuilds the stored score of $title from its tags", ({ d, ctx }) => {
    const dom = domain(d);
    const stored = computeBaseSignals(dom, [], baseContext(ctx));
    const replayed = computeBaseSignals(
      dom,
      [],
      replayContext({ ...dom, tags: stored.tags, kyc: stored.kyc }),
    );
    expect(replayed.baseScore).toBe(stored.baseScore);
    expect(replayed.tags).toEqual(stored.tags);
    expect(replayed.details.map((x) => x.rule)).toEqual(stored.details.map((x) => x.rule));
  });
});

describe("createBaseSignalsFn", () => {
  it("returns the stored fields only, with the context in force at call time", () => {
    let kyc = new Set<string>();
    const fn = createBaseSignalsFn(() => baseContext({ kycOwners: kyc }));
    const d = domain();
    expect(fn(d, [])).toEqual({
      baseScore: 75,
      spam: false,
      csamOk: true,
      kyc: false,
      tags: ["origin-provider"],
    });
    kyc = new Set([OWNER]);
    expect(fn(d, [])).toMatchObject({ baseScore: 80, kyc: true });
  });
});

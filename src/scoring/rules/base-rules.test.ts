import { describe, expect, it } from "vitest";
import {
  baseContext,
  domain,
  record,
  T0,
  TEST_CSAM_TERMS,
} from "../../../test/scoring/helpers/scoring-fixtures.js";
import type { BaseRule, BaseSignalsContext } from "../scoring.types.js";
import { blocklistRule } from "./blocklist.rule.js";
import { collisionRule } from "./collision.rule.js";
import { confusableRule } from "./confusable.rule.js";
import { screenCsam } from "./csam.rule.js";
import { ensNormalizationRule } from "./ens-normalization.rule.js";
import { icannCollisionRule } from "./icann-collision.rule.js";
import { invisibleCharsRule } from "./invisible-chars.rule.js";
import { kycRule } from "./kyc.rule.js";
import { mixedScriptRule } from "./mixed-script.rule.js";
import { originProviderRule } from "./origin-provider.rule.js";
import { providerWeightRule } from "./provider-weight.rule.js";
import { recordsRule } from "./records.rule.js";
import { SPAM_CAP, spamCapEffect } from "./spam-cap.rule.js";

type Row = {
  title: string;
  d?: Parameters<typeof domain>[0];
  ctx?: Partial<BaseSignalsContext>;
  records?: number;
  /** null: the rule says nothing. */
  want: { effect: number; tags?: string[]; spam?: boolean } | null;
};

function table(rule: BaseRule, rows: Row[]) {
  describe(`${rule.name} rule`, () => {
    it.each(rows)("$title", ({ d, ctx, records, want }) => {
      const recs = Array.from({ length: records ?? 0 }, (_, i) => record(`token.ETH.${i}`, "0x01"));
      const out = rule.evaluate({ domain: domain(d), records: recs, ctx: baseContext(ctx) });
      if (want === null) {
        expect(out).toBeNull();
        return;
      }
      expect(out).not.toBeNull();
      expect(out?.effect).toBe(want.effect);
      expect([...(out?.tags ?? [])]).toEqual(want.tags ?? []);
      expect(out?.spam ?? false).toBe(want.spam ?? false);
      expect(out?.reason.length).toBeGreaterThan(0);
    });
  });
}

table(providerWeightRule, [
  { title: "a live provider earns its weight", d: { provider: "NAMESPACE_B" }, want: { effect: 5 } },
  {
    title: "NAMESPACE_C too",
    d: { provider: "NAMESPACE_C", network: "ETHEREUM", name: "a.eth" },
    want: { effect: 5 },
  },
  {
    title: "NAMESPACE_D on SOLANA too",
    d: { provider: "NAMESPACE_D", network: "SOLANA", name: "a.sol" },
    want: { effect: 5 },
  },
]);

const originB = { provider: "NAMESPACE_B" as const, network: "ETHEREUM" as const, registeredAt: T0 - 1000 };
table(originProviderRule, [
  {
    title: "the first name of an unknown TLD is its origin",
    want: { effect: 20, tags: ["origin-provider"] },
  },
  {
    title: "a provider that registered after the origin gets a tld-collision tag",
    ctx: { tldOrigin: () => originB },
    want: { effect: 0, tags: ["tld-collision:NAMESPACE_B"] },
  },
  {
    title: "another name of the origin provider earns the bonus, on any network",
    d: { provider: "NAMESPACE_B", network: "POLYGON" },
    ctx: { tldOrigin: () => originB },
    want: { effect: 20, tags: ["origin-provider"] },
  },
  {
    title: "a domain registered before the index's origin is the origin",
    d: { registeredAt: T0 - 5000 },
    ctx: { tldOrigin: () => originB },
    want: { effect: 20, tags: ["origin-provider"] },
  },
  {
    title: "same registration time: provider order decides",
    d: { registeredAt: T0 - 1000, provider: "NAMESPACE_A" },
    ctx: { tldOrigin: () => originB },
    want: { effect: 20, tags: ["origin-provider"] },
  },
  {
    title: "an unknown registration time never beats a known one",
    d: { registeredAt: null },
    ctx: { tldOrigin: () => originB },
    want: { effect: 0, tags: ["tld-collision:NAMESPACE_B"] },
  },
]);

table(icannCollisionRule, [
  {
    title: "a TLD of the ICANN root is penalized",
    d: { name: "acme.com" },
    want: { effect: -15, tags: ["icann-collision"] },
  },
  { title: "a Web3-only TLD is not", d: { name: "acme.wallet" }, want: null },
  {
    title: "the list decides, not a guess",
    d: { name: "acme.wallet" },
    ctx: { icannTlds: new Set(["wallet"]) },
    want: { effect: -15, tags: ["icann-collision"] },
  },
]);

table(kycRule, [
  {
    title: "an owner on the KYC list earns the bonus",
    ctx: { kycOwners: new Set(["0x00000000000000000000000000000000000000aa"]) },
    want: { effect: 5 },
  },
  {
    title: "another owner does not",
    ctx: { kycOwners: new Set(["0x00000000000000000000000000000000000000bb"]) },
    want: null,
  },
]);

table(recordsRule, [
  { title: "a name with records earns the bonus", records: 3, want: { effect: 5 } },
  { title: "a bare mint does not", records: 0, want: null },
]);

table(collisionRule, [
  {
    title: "a name held twice is tagged",
    ctx: { holders: () => 2 },
    want: { effect: 0, tags: ["collision"] },
  },
  { title: "a unique name is not", ctx: { holders: () => 1 }, want: null },
  { title: "without the index nothing is claimed", want: null },
]);

table(ensNormalizationRule, [
  { title: "an ASCII name passes", want: null },
  { title: "a Unicode name in normal form passes", d: { name: "café.wallet" }, want: null },
  {
    title: "an ENS name whose label was never seen passes",
    d: { name: `[${"ab".repeat(32)}].eth` },
    want: null,
  },
  {
    title: "Latin mixed with Cyrillic fails",
    d: { name: "\u0430lice.wallet" },
    want: { effect: 0, tags: ["spam:normalization"], spam: true },
  },
  {
    title: "an underscore inside a label fails",
    d: { name: "a_b.wallet" },
    want: { effect: 0, tags: ["spam:normalization"], spam: true },
  },
]);

table(invisibleCharsRule, [
  { title: "a plain name is clean", want: null },
  {
    title: "a zero-width space is invisible",
    d: { name: "ali\u200bce.wallet" },
    want: { effect: 0, tags: ["spam:invisible"], spam: true },
  },
  {
    title: "a right-to-left override reorders the display",
    d: { name: "ali\u202ece.wallet" },
    want: { effect: 0, tags: ["spam:invisible"], spam: true },
  },
  {
    title: "a soft hyphen is invisible",
    d: { name: "ali\u00adce.wallet" },
    want: { effect: 0, tags: ["spam:invisible"], spam: true },
  },
  { title: "a ZWJ emoji sequence is not", d: { name: "🏳\u200d🌈.eth" }, want: null },
  {
    title: "a ZWJ between letters is",
    d: { name: "ali\u200dce.wallet" },
    want: { effect: 0, tags: ["spam:invisible"], spam: true },
  },
]);

table(mixedScriptRule, [
  { title: "Latin only", want: null },
  { title: "Cyrillic only", d: { name: "привет.web3" }, want: null },
  { title: "Han with Katakana is Japanese", d: { name: "東京タワー.wallet" }, want: null },
  { title: "Han with Hangul is Korean", d: { name: "中文한국.wallet" }, want: null },
  { title: "digits and hyphens go with any script", d: { name: "привет-2024.web3" }, want: null },
  {
    title: "a Cyrillic а among Latin letters",
    d: { name: "p\u0430ypal.wallet" },
    want: { effect: 0, tags: ["spam:mixed-script"], spam: true },
  },
  {
    title: "Greek among Latin letters",
    d: { name: "\u03bfpen.wallet" },
    want: { effect: 0, tags: ["spam:mixed-script"], spam: true },
  },
  {
    title: "scripts are per label: a Cyrillic label under a Latin TLD",
    d: { name: "привет.wallet" },
    want: null,
  },
]);

table(confusableRule, [
  {
    title: "a name that imitates a higher-scored one",
    d: { name: "\u0430lice.wallet" },
    ctx: { imitated: (n) => (n === "\u0430lice.wallet" ? "alice.wallet" : null) },
    want: { effect: 0, tags: ["spam:confusable", "confusable:alice.wallet"], spam: true },
  },
  { title: "the imitated name itself", ctx: { imitated: () => null }, want: null },
  { title: "without the index nothing is claimed", d: { name: "\u0430lice.wallet" }, want: null },
]);

table(blocklistRule, [
  {
    title: "a listed name",
    d: { name: "scam.wallet" },
    ctx: { blocklist: { names: new Set(["scam.wallet"]), tlds: new Set() } },
    want: { effect: 0, tags: ["spam:blocklist"], spam: true },
  },
  {
    title: "a name under a listed TLD",
    d: { name: "any.badtld" },
    ctx: { blocklist: { names: new Set(), tlds: new Set(["badtld"]) } },
    want: { effect: 0, tags: ["spam:blocklist"], spam: true },
  },
  {
    title: "a name that only contains a listed name",
    d: { name: "notscam.wallet" },
    ctx: { blocklist: { names: new Set(["scam.wallet"]), tlds: new Set() } },
    want: null,
  },
]);

describe("spam-cap rule", () => {
  it.each([
    { score: 80, effect: SPAM_CAP - 80 },
    { score: SPAM_CAP, effect: 0 },
    { score: 3, effect: 0 },
  ])("caps $score with effect $effect", ({ score, effect }) => {
    expect(spamCapEffect(score)).toBe(effect);
  });
});

describe("csam screening", () => {
  it.each([
    { name: "alice.wallet", match: -1 },
    { name: "zzforbiddenzz.wallet", match: 0 },
    { name: "myzzforbiddenzzshop.x", match: 0 },
    { name: "zz-forbidden-zz.wallet", match: 0 },
    { name: "qqb\u0430nnedqq.wallet", match: 1 }, // Cyrillic а: a lookalike of the term
    { name: "zzforbidden.wallet", match: -1 },
  ])("$name → term $match", ({ name, match }) => {
    expect(screenCsam(name, TEST_CSAM_TERMS)).toBe(match);
  });

  it("passes every name when no list is configured", () => {
    expect(screenCsam("zzforbiddenzz.wallet", [])).toBe(-1);
  });
});

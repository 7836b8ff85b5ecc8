import { describe, expect, it } from "vitest";
import { DAY } from "../../../test/scoring/helpers/scoring-fixtures.js";
import { parseGeoBlockedWords } from "../geography.js";
import { compileProjectRules } from "../project-rules.js";
import { AGE_MAX, ageEffect } from "./age.rule.js";
import { exceptionFor, matchesException } from "./exception.rule.js";
import { isExpired } from "./expiry.rule.js";
import { geoBlockedWordFor } from "./geo-block.rule.js";
import { isAllowedByProject } from "./project-filter.rule.js";
import { priorityEffect, priorityRank } from "./provider-priority.rule.js";

const NOW = Date.UTC(2025, 0, 1);

describe("age rule", () => {
  it.each([
    { title: "unknown registration", at: null, want: 0 },
    { title: "registered today", at: NOW, want: 0 },
    { title: "registered in the future (clock skew)", at: NOW + DAY, want: 0 },
    { title: "90 days ago", at: NOW - 90 * DAY, want: 0 },
    { title: "91 days ago", at: NOW - 91 * DAY, want: 1 },
    { title: "a year ago", at: NOW - 365 * DAY, want: 4 },
    { title: "ten years ago: capped", at: NOW - 3650 * DAY, want: AGE_MAX },
  ])("$title → +$want", ({ at, want }) => {
    expect(ageEffect(at, NOW)).toBe(want);
  });
});

describe("expiry rule", () => {
  it.each([
    { title: "no expiry", at: null, want: false },
    { title: "expires later", at: NOW + 1, want: false },
    { title: "expires now", at: NOW, want: true },
    { title: "expired", at: NOW - DAY, want: true },
  ])("$title → $want", ({ at, want }) => {
    expect(isExpired(at, NOW)).toBe(want);
  });
});

describe("project-filter rule", () => {
  const rows = [
    {
      title: "no settings serve everything",
      s: {},
      d: { network: "BSC", provider: "NAMESPACE_A" },
      want: true,
    },
    {
      title: "a disabled network",
      s: { networks: { disabled: ["BSC"] } },
      d: { network: "BSC", provider: "NAMESPACE_A" },
      want: false,
    },
    {
      title: "another network stays",
      s: { networks: { disabled: ["BSC"] } },
      d: { network: "POLYGON", provider: "NAMESPACE_A" },
      want: true,
    },
    {
      title: "an enabled list excludes the rest",
      s: { networks: { enabled: ["ETHEREUM"] } },
      d: { network: "POLYGON", provider: "NAMESPACE_B" },
      want: false,
    },
    {
      title: "a disabled provider",
      s: { providers: { disabled: ["NAMESPACE_B"] } },
      d: { network: "POLYGON", provider: "NAMESPACE_B" },
      want: false,
    },
    {
      title: "enabled providers",
      s: { providers: { enabled: ["NAMESPACE_B"] } },
      d: { network: "POLYGON", provider: "NAMESPACE_B" },
      want: true,
    },
    {
      title: "aliases work",
      s: { providers: { disabled: ["ens"] } },
      d: { network: "ETHEREUM", provider: "NAMESPACE_C" },
      want: false,
    },
  ];
  it.each(rows)("$title", ({ s, d, want }) => {
    expect(isAllowedByProject(d, compileProjectRules(s))).toBe(want);
  });
});

describe("provider-priority rule", () => {
  const rules = compileProjectRules({ providerPriority: ["NAMESPACE_C", "NAMESPACE_B"] });
  it.each([
    { provider: "NAMESPACE_C", rank: 0, effect: 80 },
    { provider: "NAMESPACE_B", rank: 1, effect: 40 },
    { provider: "NAMESPACE_A", rank: 2, effect: 0 },
    { provider: "NAMESPACE_D", rank: 2, effect: 0 },
  ])("$provider is #$rank (+$effect)", ({ provider, rank, effect }) => {
    expect(priorityRank(provider, rules)).toBe(rank);
    expect(priorityEffect(rank, rules.priority.size)).toBe(effect);
  });

  it("outweighs any difference of base scores between live providers", () => {
    // origin 20 + KYC 5 + records 5 + age 8
    expect(priorityEffect(1, 2)).toBeGreaterThan(38);
  });

  it("is neutral with no list", () => {
    const none = compileProjectRules({});
    expect(priorityRank("NAMESPACE_A", none)).toBe(priorityRank("NAMESPACE_C", none));
  });
});

describe("exception rule", () => {
  const rules = compileProjectRules({
    exceptions: [
      { tld: "wallet", provider: "NAMESPACE_B" },
      { domain: "alice.wallet", provider: "NAMESPACE_A", network: "POLYGON" },
    ],
  });
  it.each([
    {
      title: "a domain exception wins over the TLD's",
      d: { name: "alice.wallet", tld: "wallet", provider: "NAMESPACE_A", network: "POLYGON" },
      picked: true,
    },
    {
      title: "…but only on its network",
      d: { name: "alice.wallet", tld: "wallet", provider: "NAMESPACE_A", network: "BSC" },
      picked: false,
    },
    {
      title: "the TLD's provider loses to the domain exception",
      d: { name: "alice.wallet", tld: "wallet", provider: "NAMESPACE_B", network: "ETHEREUM" },
      picked: false,
    },
    {
      title: "a TLD exception for other names",
      d: { name: "moon.wallet", tld: "wallet", provider: "NAMESPACE_B", network: "POLYGON" },
      picked: true,
    },
    {
      title: "another provider under that TLD",
      d: { name: "moon.wallet", tld: "wallet", provider: "NAMESPACE_A", network: "AURORA" },
      picked: false,
    },
    {
      title: "no exception for the TLD",
      d: { name: "bob.x", tld: "x", provider: "NAMESPACE_B", network: "ETHEREUM" },
      picked: false,
    },
  ])("$title", ({ d, picked }) => {
    const e = exceptionFor(d, rules);
    expect(e !== null && matchesException(d, e)).toBe(picked);
  });
});

describe("geo-block rule", () => {
  const words = parseGeoBlockedWords(JSON.stringify({ DE: ["casino"], FR: ["pari"] }));
  it.each([
    {
      title: "a blocked word for the caller's country",
      name: "bestcasino.wallet",
      country: "DE",
      want: "casino",
    },
    { title: "the same name elsewhere", name: "bestcasino.wallet", country: "US", want: null },
    { title: "no country known", name: "bestcasino.wallet", country: null, want: null },
    { title: "hyphenated", name: "ca-sino.x", country: "DE", want: "casino" },
    { title: "a Cyrillic lookalike of the word", name: "c\u0430sino.x", country: "DE", want: "casino" },
    { title: "another country's word", name: "pari.x", country: "DE", want: null },
    { title: "a clean name", name: "alice.wallet", country: "DE", want: null },
  ])("$title", ({ name, country, want }) => {
    expect(geoBlockedWordFor(name, country, words)).toBe(want);
  });
});

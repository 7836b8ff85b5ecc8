import { describe, expect, it } from "vitest";
import { crawlSignals } from "../../src/cli/crawler-role.js";
import type { DomainWrite } from "../../src/domain/types.js";
import { EMPTY_INDEX, type ScoringFacts } from "../../src/scoring/scoring-index.js";
import type { ScoringLists } from "../../src/scoring/scoring-lists.js";

/**
 * The crawler's SignalsFn builds one scoring context per set of index facts, not one per domain:
 * a domain scored after the rescoring pass replaced the facts sees the new ones, and before it the
 * old ones, exactly as with a context built per call.
 */
const T0 = 1_700_000_000_000;
const lists: ScoringLists = {
  csamTerms: [],
  blocklist: { names: new Set(), tlds: new Set() },
  kycOwners: new Set(),
  icannTlds: new Set(["com"]),
};
const domain: DomainWrite = {
  provider: "NAMESPACE_A",
  network: "POLYGON",
  tokenId: "0x01",
  name: "late.web3",
  sld: "late",
  tld: "web3",
  owner: "0x00000000000000000000000000000000000000aa",
  contractAddress: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
  resolver: null,
  registeredAt: T0 + 1_000,
  registeredBlock: 10,
  expiresAt: null,
  lastUpdateBlock: 10,
  lastUpdateAt: T0 + 1_000,
  baseScore: 50,
  spam: false,
  csamOk: true,
  kyc: false,
  tags: [],
};

describe("crawlSignals", () => {
  it("follows the index facts each time the rescoring pass replaces them", () => {
    let facts: ScoringFacts = EMPTY_INDEX;
    const signals = crawlSignals(lists, () => facts);
    expect(signals(domain, []).tags).not.toContain("tld-collision:NAMESPACE_B");
    facts = {
      tldOrigins: new Map([["web3", { provider: "NAMESPACE_B", network: "POLYGON", registeredAt: T0 }]]),
      imitated: new Map(),
    };
    expect(signals(domain, []).tags).toContain("tld-collision:NAMESPACE_B");
    expect(signals({ ...domain, tld: "other", name: "late.other" }, []).tags).not.toContain(
      "tld-collision:NAMESPACE_B",
    );
    facts = EMPTY_INDEX;
    expect(signals(domain, []).tags).not.toContain("tld-collision:NAMESPACE_B");
  });
});

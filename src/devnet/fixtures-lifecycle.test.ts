import { describe, expect, it, vi } from "vitest";
import {
  expectedOwner,
  fixtureByName,
  fixtureReverseOf,
  fixturesByName,
  ownerHistory,
} from "./fixture-lookups.js";
import { buildFixtureWorld, fixtureWorld, fixtureBaseTime, NOTABLE } from "./fixtures.js";

const { domains, owners } = fixtureWorld();
const YEAR = 365 * 86_400_000;
const byProvider = (p: string) => domains.filter((d) => d.provider === p);

describe("fixture world: lifecycle", () => {
  const base = fixtureBaseTime();

  it("has expired names only where names expire (UNS, ENS), long expired a year after the epoch", () => {
    const expired = domains.filter((d) => d.expiresAt !== null && d.expiresAt < base + YEAR);
    expect(expired.map((d) => d.name).sort()).toEqual([...NOTABLE.expired].sort());
    for (const d of expired) {
      expect(["NAMESPACE_B", "NAMESPACE_C"]).toContain(d.provider);
      expect(d.expiresAt!).toBeGreaterThan(d.registeredAt);
      // past ENS's 90-day grace period too
      expect(d.expiresAt! + 90 * 86_400_000).toBeLessThan(base + YEAR);
    }
    for (const d of byProvider("NAMESPACE_A")) expect(d.expiresAt).toBeNull();
    // Live names stay live for years after the epoch, so a wall-clock "now" does not expire them.
    for (const d of domains)
      if (d.expiresAt !== null && !expired.includes(d)) expect(d.expiresAt).toBeGreaterThan(base + 10 * YEAR);
    const ens2ld = byProvider("NAMESPACE_C").filter((d) => d.name.split(".").length === 2);
    for (const d of ens2ld) expect(d.expiresAt, d.name).not.toBeNull();
  });

  it("has transferred names whose expected owner is the last transfer's target", () => {
    const moved = domains.filter((d) => d.history?.previousOwners?.length);
    expect(moved.map((d) => d.name).sort()).toEqual([...NOTABLE.transferred].sort());
    for (const d of moved) {
      const chain = ownerHistory(d);
      expect(chain.length).toBeGreaterThan(1);
      for (let i = 1; i < chain.length; i++) expect(chain[i], d.name).not.toBe(chain[i - 1]);
      expect(expectedOwner(d)).toBe(d.owner);
    }
    expect(expectedOwner(fixtureByName("alice.wallet")!)).toBe(owners.alice);
  });

  it("has names whose records were reset and set again", () => {
    const reset = domains.filter((d) => d.history?.resetRecordsBefore?.length);
    expect(reset.map((d) => d.name).sort()).toEqual([...NOTABLE.reset].sort());
    expect(new Set(reset.map((d) => d.provider)).size).toBe(3);
    for (const d of reset) {
      const after = new Map(d.records);
      const stale = d.history!.resetRecordsBefore!.filter(([k, v]) => after.get(k) !== v);
      expect(stale.length, d.name).toBeGreaterThan(0);
    }
  });

  it("sets reverse records once per (owner, provider, network), for several owners", () => {
    const rev = domains.filter((d) => d.reverse);
    const keys = rev.map((d) => `${d.owner}/${d.provider}/${d.network}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(rev.map((d) => d.owner)).size).toBeGreaterThanOrEqual(4);
    const aliceProviders = new Set(
      fixtureReverseOf(owners.alice.toUpperCase().replace("0X", "0x")).map((d) => d.provider),
    );
    expect(aliceProviders).toEqual(new Set(["NAMESPACE_A", "NAMESPACE_C"]));
    // ENS reverse names must forward-resolve to their owner.
    for (const d of rev.filter((x) => x.provider === "NAMESPACE_C")) {
      expect(d.records.find(([k]) => k === "addr.60")?.[1], d.name).toBe(d.owner);
    }
  });
});

describe("fixture world: determinism and look-ups", () => {
  it("builds the same world every time without randomness or the clock", () => {
    const random = vi.spyOn(Math, "random");
    const now = vi.spyOn(Date, "now");
    try {
      expect(buildFixtureWorld()).toEqual(fixtureWorld());
      expect(random).not.toHaveBeenCalled();
      expect(now).not.toHaveBeenCalled();
    } finally {
      random.mockRestore();
      now.mockRestore();
    }
  });

  it("finds fixtures by any input form of a name", () => {
    expect(fixturesByName(" BOB.X ")).toHaveLength(4);
    expect(fixtureByName("bob.x", { provider: "NAMESPACE_A", network: "BSC" })?.owner).toBe(owners.dave);
    expect(fixtureByName("bob.x")?.provider).toBe("NAMESPACE_B"); // first registration
    expect(fixtureByName("XN--CAF-DMA.wallet", { provider: "NAMESPACE_B" })?.network).toBe("POLYGON");
    expect(fixtureByName("nobody.x")).toBeNull();
    expect(fixturesByName("not a name")).toEqual([]);
    expect(fixtureReverseOf("0x0000000000000000000000000000000000000000")).toEqual([]);
  });
});

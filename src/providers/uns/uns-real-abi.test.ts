import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type AbiEvent, toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { CNS_RESOLVE } from "./uns.adapter.js";
import { UNS_TOPICS } from "./uns-events.js";

/**
 * The topics the UNS adapter decodes, against the real contracts' ABIs in the
 * `@unstoppabledomains/uns` artifacts (the bytecode the devnet deploys): same topic0, same
 * indexed layout, and every real event of the registries and the CNS resolver either decoded or
 * listed here with the reason it is not.
 */
const layout = (e: AbiEvent) => e.inputs.map((i) => `${i.type}${i.indexed ? " indexed" : ""}`).join(",");
const require = createRequire(import.meta.url);
const events = (name: string): AbiEvent[] => {
  const file = require.resolve(`@unstoppabledomains/uns/artifacts/${name}.json`);
  const { abi } = JSON.parse(readFileSync(file, "utf8")) as { abi: Array<{ type: string }> };
  return abi.filter((i): i is AbiEvent => i.type === "event");
};

const DECODED: Record<string, Array<[string, string]>> = {
  UNSRegistry: Object.entries(UNS_TOPICS).filter(([n]) => n !== "NewKey"),
  CNSRegistry: [
    ["Transfer", UNS_TOPICS.Transfer],
    ["NewURI", UNS_TOPICS.NewURI],
    ["Resolve", CNS_RESOLVE],
  ],
  Resolver: [
    ["Set", UNS_TOPICS.Set],
    ["ResetRecords", UNS_TOPICS.ResetRecords],
  ],
};

/** Real events not decoded, and why. */
const NOT_DECODED: Record<string, string> = {
  "UNSRegistry.NewKey": "announces a key name that Set repeats",
  "UNSRegistry.NewURIPrefix": "token metadata URI prefix",
  "UNSRegistry.Approval": "approvals change no owner or record",
  "UNSRegistry.ApprovalForAll": "approvals change no owner or record",
  "UNSRegistry.Initialized": "proxy bookkeeping",
  "UNSRegistry.Upgraded": "proxy bookkeeping",
  "UNSRegistry.AdminChanged": "proxy bookkeeping",
  "CNSRegistry.NewURIPrefix": "token metadata URI prefix",
  "CNSRegistry.Sync": "a resolver's change notice; the resolver's own Set/ResetRecords are read",
  "CNSRegistry.Approval": "approvals change no owner or record",
  "CNSRegistry.ApprovalForAll": "approvals change no owner or record",
  "Resolver.NewKey": "announces a key name that Set repeats",
};

describe("UNS topics against the real contracts' ABIs (@unstoppabledomains/uns artifacts)", () => {
  it.each(Object.entries(DECODED).flatMap(([c, list]) => list.map(([n, t]) => [c, n, t] as const)))(
    "%s.%s has the decoded topic0",
    (contract, name, topic) => {
      const real = events(contract).find((e) => e.name === name);
      expect(real, `${contract} has no ${name}`).toBeDefined();
      expect(toEventSelector(real!)).toBe(topic);
    },
  );

  it("the record and token events have the indexed layout the decoder reads", () => {
    const set = events("UNSRegistry").find((e) => e.name === "Set")!;
    expect(layout(set)).toBe("uint256 indexed,string indexed,string indexed,string,string");
    expect(layout(events("Resolver").find((e) => e.name === "Set")!)).toBe(layout(set));
    expect(layout(events("CNSRegistry").find((e) => e.name === "Resolve")!)).toBe(
      "uint256 indexed,address indexed",
    );
    expect(layout(events("UNSRegistry").find((e) => e.name === "SetExpiry")!)).toBe("uint256 indexed,uint64");
    expect(layout(events("UNSRegistry").find((e) => e.name === "Transfer")!)).toBe(
      "address indexed,address indexed,uint256 indexed",
    );
  });

  it("every real event of the UNS registry, the CNS registry and the CNS resolver is decoded or listed", () => {
    const unaccounted: string[] = [];
    for (const [contract, list] of Object.entries(DECODED)) {
      const decoded = new Set(list.map(([n]) => n));
      for (const e of events(contract)) {
        const key = `${contract}.${e.name}`;
        if (!decoded.has(e.name!) && NOT_DECODED[key] === undefined) unaccounted.push(key);
      }
    }
    expect(unaccounted).toEqual([]);
    const stale = Object.keys(NOT_DECODED).filter((key) => {
      const [contract, name] = key.split(".");
      return !events(contract).some((e) => e.name === name);
    });
    expect(stale, "listed but not in the real ABI").toEqual([]);
  });
});

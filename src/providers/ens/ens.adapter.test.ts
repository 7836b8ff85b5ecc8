import { describe, expect, it } from "vitest";
import { childNode, ETH_NODE } from "../namehash.js";
import { ensAdapter } from "./ens.adapter.js";
import { A, ALICE_LABEL, C } from "./ens.testing.js";
import { ENS_TOPICS } from "./ens-topics.js";

describe("ensAdapter.filters", () => {
  it("asks each role for its events and every address for resolver events", () => {
    const filters = ensAdapter.filters(C);
    const byAddress = new Map(
      filters.map((f) => [f.address === null ? "any" : f.address.join(","), f.topic0]),
    );
    expect(byAddress.get(A.registry)).toEqual([
      ENS_TOPICS.NewOwner,
      ENS_TOPICS.RegistryTransfer,
      ENS_TOPICS.NewResolver,
    ]);
    expect(
      byAddress.get([A["controller:legacy"], A["controller:wrapped"], A["controller:unwrapped"]].join(",")),
    ).toHaveLength(5);
    expect(byAddress.get(A.nameWrapper)).toContain(ENS_TOPICS.TransferSingle);
    expect(byAddress.get(A.defaultReverseRegistrar)).toEqual([ENS_TOPICS.NameForAddrChanged]);
    const any = filters.find((f) => f.address === null);
    expect(any?.topic0).toContain(ENS_TOPICS.TextChanged);
    expect(any?.topic0).toContain(ENS_TOPICS.ReverseClaimed);
    // Every topic the adapter decodes is fetched by some filter.
    const all = new Set(filters.flatMap((f) => f.topic0));
    for (const t of Object.values(ENS_TOPICS)) expect(all.has(t)).toBe(true);
  });

  it("leaves out roles that are not configured", () => {
    const filters = ensAdapter.filters({ addresses: { registry: A.registry }, startBlock: 0 });
    expect(filters.map((f) => f.address)).toEqual([[A.registry], null]);
  });
});

describe("ensAdapter", () => {
  it("derives token ids by namehash, and a registrar id by labelhash under .eth", () => {
    expect(ensAdapter.tokenIdOf("alice.eth")).toBe(childNode(ETH_NODE, ALICE_LABEL));
  });

  it("exports the mainnet contracts of docs/chain-facts.md", () => {
    expect(C.startBlock).toBe(9_380_380);
    expect(A.baseRegistrar).toBe("0x57f1887a8bf19b14fc0df6fd9b2acc9af147ea85");
    for (const a of Object.values(A)) expect(a).toMatch(/^0x[0-9a-f]{40}$/);
  });
});

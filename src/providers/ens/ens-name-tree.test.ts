import { describe, expect, it } from "vitest";
import { ADDR_REVERSE_NODE, ETH_NODE, labelhash, namehash, reverseNode } from "../namehash.js";
import { ensNameTree } from "./ens-name-tree.js";

const ALICE = "0x00000000000000000000000000000000000a11ce";
const token = (name: string, parent: string | null = null) => ({
  tokenId: namehash(name),
  parentTokenId: parent,
});

describe("ENS name tree", () => {
  it.each([
    ["a .eth second-level name follows its NFT holder", token("alice.eth", ETH_NODE), true],
    [
      "a subname follows the latest of NFT holder and registry owner",
      token("pay.alice.eth", namehash("alice.eth")),
      false,
    ],
    ["a top-level node follows the latest owner", token("eth"), false],
  ])("%s", (_label, t, nft) => {
    expect(ensNameTree.ownedByNftHolder?.(t)).toBe(nft);
  });

  it.each([
    ["`reverse` is bookkeeping", token("reverse"), false],
    [
      "`addr.reverse` is bookkeeping",
      { tokenId: ADDR_REVERSE_NODE, parentTokenId: namehash("reverse") },
      false,
    ],
    [
      "an address's reverse node is bookkeeping",
      { tokenId: reverseNode(ALICE), parentTokenId: ADDR_REVERSE_NODE },
      false,
    ],
    ["a name is a name", token("alice.eth", ETH_NODE), true],
  ])("%s", (_label, t, isName) => {
    expect(ensNameTree.isNameToken?.(t)).toBe(isName);
  });

  it.each([
    ["eth", "eth"],
    ["reverse", "reverse"],
    ["addr", "addr"],
    ["alice", null],
  ])("knows the label hash of %s: %s", (label, known) => {
    expect(ensNameTree.knownLabel?.(labelhash(label))).toBe(known);
  });

  it("keeps an address's primary name on its reverse node", () => {
    expect(ensNameTree.reverseNodeOf?.(ALICE)).toBe(namehash(`${ALICE.slice(2)}.addr.reverse`));
  });
});

import { describe, expect, it } from "vitest";
import {
  ACTIVE_NETWORKS,
  NETWORKS,
  NETWORK_ORDER,
  findNetwork,
  isNetwork,
  networkByChainId,
} from "./networks.js";

describe("findNetwork", () => {
  it.each([
    ["ETHEREUM", "ETHEREUM"],
    ["POLYGON", "POLYGON"],
    ["BSC", "BSC"],
    ["AURORA", "AURORA"],
    ["SOLANA", "SOLANA"],
    ["ethereum", "ETHEREUM"],
    ["Polygon", "POLYGON"],
    ["bsc", "BSC"],
    ["aUrOrA", "AURORA"],
    ["solana", "SOLANA"],
    [" BSC ", "BSC"],
    ["eth", "ETHEREUM"],
    ["MAINNET", "ETHEREUM"],
    ["matic", "POLYGON"],
    ["bnb", "BSC"],
    ["Binance", "BSC"],
    ["sol", "SOLANA"],
    ["", null],
    ["BITCOIN", null],
    ["ETHEREUM2", null],
    ["POLY GON", null],
    ["1", null],
    ["__proto__", null],
    ["constructor", null],
  ])("%j → %s", (input, expected) => {
    expect(findNetwork(input)).toBe(expected);
  });
});

describe("networks", () => {
  it("has exactly the wire values of the spec, in tie-break order", () => {
    expect(NETWORK_ORDER).toEqual(["ETHEREUM", "POLYGON", "BSC", "AURORA", "SOLANA"]);
    expect(Object.keys(NETWORKS).sort()).toEqual([...NETWORK_ORDER].sort());
  });

  it("marks every network active, SOLANA included", () => {
    expect(ACTIVE_NETWORKS).toEqual(["ETHEREUM", "POLYGON", "BSC", "AURORA", "SOLANA"]);
    expect(NETWORKS.SOLANA.comingSoon).toBe(false);
  });

  it.each([
    [1, "ETHEREUM"],
    [137, "POLYGON"],
    [56, "BSC"],
    [1313161554, "AURORA"],
    [0, null], // SOLANA has no EVM chain id
    [31337, null],
  ])("chain id %i → %s", (chainId, expected) => {
    expect(networkByChainId(chainId)).toBe(expected);
  });

  it("uses the finality windows of docs/crawler.md", () => {
    expect(NETWORKS.ETHEREUM.finality).toBe(65);
    expect(NETWORKS.POLYGON.finality).toBe(200);
    expect(NETWORKS.BSC.finality).toBe(30);
    expect(NETWORKS.AURORA.finality).toBe(30);
  });

  it("accepts only exact wire values in isNetwork", () => {
    expect(isNetwork("POLYGON")).toBe(true);
    expect(isNetwork("polygon")).toBe(false);
    expect(isNetwork("MATIC")).toBe(false);
    expect(isNetwork("toString")).toBe(false);
  });
});

import { hexToBigInt, keccak256, stringToBytes, toBytes, namehash as viemNamehash } from "viem";
import { describe, expect, it } from "vitest";
import {
  ADDR_REVERSE_NODE,
  childNode,
  ETH_NODE,
  fnsTokenId,
  keccak256 as fastKeccak256,
  keccak256Bytes,
  labelhash,
  namehash,
  reverseNode,
} from "./namehash.js";

describe("namehash", () => {
  it.each([
    ["", `0x${"0".repeat(64)}`],
    ["crypto", "0x0f4a10a4f46c288cea365fcf45cccf0e9d901b945b9829ccdb54c10dc3cb7a6f"],
    ["eth", "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae"],
    ["addr.reverse", "0x91d1777781884d03a6757a803996e38de2a42967fb37eeaca72729271025a9e2"],
    ["foo.eth", "0xde9b09fd7c5f901e23a3f19fecc54828e9c848539801e86591bd9801b019f84f"],
  ])("namehash(%j) is the EIP-137 value", (name, expected) => {
    expect(namehash(name)).toBe(expected);
  });

  it.each(["alice.eth", "sub.alice.eth", "brad.crypto", "💩💩💩.eth", "a.b.c.d.e.wallet"])(
    "agrees with viem for %s",
    (name) => {
      expect(namehash(name)).toBe(viemNamehash(name));
    },
  );

  it("reads an encoded [labelhash] label as its hash", () => {
    const hash = labelhash("alice");
    expect(namehash(`[${hash.slice(2)}].eth`)).toBe(namehash("alice.eth"));
    expect(labelhash(`[${hash.slice(2)}]`)).toBe(hash);
  });

  it("exports the eth and addr.reverse nodes", () => {
    expect(ETH_NODE).toBe(namehash("eth"));
    expect(ADDR_REVERSE_NODE).toBe(namehash("addr.reverse"));
  });

  it("childNode(parent, labelhash) is the namehash of the child", () => {
    expect(childNode(ETH_NODE, labelhash("vitalik"))).toBe(namehash("vitalik.eth"));
  });

  it("reverseNode is namehash(<lower hex>.addr.reverse) for any case of the address", () => {
    const addr = "0xD8dA6BF26964aF9D7eEd9e03E53415D37aA96045";
    expect(reverseNode(addr)).toBe(namehash("d8da6bf26964af9d7eed9e03e53415d37aa96045.addr.reverse"));
  });
});

describe("fnsTokenId", () => {
  it("matches Freename's documented check value for cederico.metaverse", () => {
    expect(hexToBigInt(fnsTokenId("cederico.metaverse"))).toBe(
      27852860280769187492768842851433555806350745604062440243777647496936527137670n,
    );
  });

  it("hashes a TLD as keccak256(bytes(tld)), not as a namehash", () => {
    expect(fnsTokenId("metaverse")).toBe(keccak256(toBytes("metaverse")));
    expect(fnsTokenId("metaverse")).not.toBe(namehash("metaverse"));
  });

  it("hashes Unicode labels in their punycode ASCII form", () => {
    expect(fnsTokenId("café.metaverse")).toBe(fnsTokenId("xn--caf-dma.metaverse"));
    expect(fnsTokenId("ok.bücher")).toBe(fnsTokenId("ok.xn--bcher-kva"));
  });

  it("treats every label left of the TLD as the SLD", () => {
    const expected = keccak256(
      new Uint8Array([...toBytes("metaverse"), ...toBytes(keccak256(toBytes("a.b")))]),
    );
    expect(fnsTokenId("a.b.metaverse")).toBe(expected);
  });
});

describe("keccak256", () => {
  // Around the 136-byte rate of keccak256: one block, exactly one, one and a bit, several.
  it.each([0, 1, 31, 32, 64, 135, 136, 137, 272, 1000])("agrees with viem on %i bytes", (n) => {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
    expect(fastKeccak256(bytes)).toBe(keccak256(bytes));
    expect(Buffer.from(keccak256Bytes(bytes)).toString("hex")).toBe(keccak256(bytes).slice(2));
  });

  it.each(["", "eth", "café", "💩💩💩", "ab\u0000cd", "0xab"])("hashes the UTF-8 bytes of %j", (s) => {
    // Solidity's keccak256(bytes(label)): a hex-looking string is text too (viem's toBytes would
    // read "0xab" as one byte).
    expect(fastKeccak256(s)).toBe(keccak256(stringToBytes(s)));
  });
});

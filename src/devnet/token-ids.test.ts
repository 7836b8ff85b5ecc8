import { labelhash } from "viem";
import { describe, expect, it } from "vitest";
import { dnsEncode, fnsTokenId, namehash, namehashId, reverseNode, tokenIdHex } from "./token-ids.js";

describe("token ids", () => {
  it.each([
    // docs/chain-facts.md: the documented Freename example
    ["cederico.metaverse", 27852860280769187492768842851433555806350745604062440243777647496936527137670n],
    // a TLD token is keccak256 of the TLD alone (= its ENS labelhash)
    ["metaverse", BigInt(labelhash("metaverse"))],
  ])("computes the Freename token id of %s", (name, id) => {
    expect(fnsTokenId(name)).toBe(id);
  });

  it("does not use namehash for Freename", () => {
    expect(fnsTokenId("cederico.metaverse")).not.toBe(namehashId("cederico.metaverse"));
  });

  it.each([
    ["eth", "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae"],
    ["addr.reverse", "0x91d1777781884d03a6757a803996e38de2a42967fb37eeaca72729271025a9e2"],
    ["crypto", "0x0f4a10a4f46c288cea365fcf45cccf0e9d901b945b9829ccdb54c10dc3cb7a6f"],
  ])("namehash(%s) is the value of docs/chain-facts.md", (name, node) => {
    expect(namehash(name)).toBe(node);
    expect(tokenIdHex(namehashId(name))).toBe(node);
  });

  it.each([
    ["pay.alice.eth", "0x0370617905616c6963650365746800"],
    ["eth", "0x0365746800"],
    ["🚀.eth", "0x04f09f9a800365746800"],
  ])("DNS-encodes %s as NameWrapped carries it", (name, wire) => {
    expect(dnsEncode(name)).toBe(wire);
  });

  it("derives the reverse node from the lower-case hex address", () => {
    const a = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    expect(reverseNode(a)).toBe(namehash("70997970c51812dc3a010c7d01b50e0d17dc79c8.addr.reverse"));
  });
});

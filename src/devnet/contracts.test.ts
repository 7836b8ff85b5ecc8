import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type AbiEvent, type AbiFunction, toEventSelector, toFunctionSignature } from "viem";
import { FNS_ABI } from "web3-domain-resolver/lib/resolver-providers/providers/freename/freename-resolver-provider.consts.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTRACT_NAMES, type ContractName, abiOf, ensureArtifacts } from "./artifacts.js";

// The event table of docs/chain-facts.md for every event our devnet contracts emit (ENS and UNS run
// the real contracts, checked by src/providers/ens/ens-real-abi.test.ts and
// src/providers/uns/uns-real-abi.test.ts):
// [contract, canonical signature, topic0 as listed there]. The topics are copied, not computed,
// so a wrong signature in a contract fails here.
const CHAIN_FACTS: Array<[ContractName, string, string]> = [
  // FNS (Freename), from the SDK ABI
  [
    "FNSRegistry",
    "Transfer(address,address,uint256)",
    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  ],
  [
    "FNSRegistry",
    "NewURI(uint256,string)",
    "0xc5beef08f693b11c316c0c8394a377a0033c9cf701b8cd8afd79cecef60c3952",
  ],
  [
    "FNSRegistry",
    "NewKey(uint256,string,string)",
    "0x7ae4f661958fbecc2f77be6b0eb280d2a6f604b29e1e7221c82b9da0c4af7f86",
  ],
  [
    "FNSRegistry",
    "SetRecord(uint256,string,string,string,string)",
    "0x0a7ae1cb64eb8d41af8aaee78f12a607071ab429d4cb7c764b43cb10e4b3e373",
  ],
  [
    "FNSRegistry",
    "ResetRecords(uint256)",
    "0x185c30856dadb58bf097c1f665a52ada7029752dbcad008ea3fefc73bee8c9fe",
  ],
  [
    "FNSRegistry",
    "SetReverse(address,uint256)",
    "0xeb76a21470988c474a21f690cc28fee1ed511bd812dc3c21fd0f49c5e5d4708a",
  ],
  [
    "FNSRegistry",
    "RemoveReverse(address)",
    "0xfcf5eec0cfa3e6332f5f0e63ec242d71f866a61d121d6cdf5c2eb3b668a26c4f",
  ],
  [
    "FNSRegistry",
    "Approval(address,address,uint256)",
    "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925",
  ],
  [
    "FNSRegistry",
    "ApprovalForAll(address,address,bool)",
    "0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31",
  ],
];

// Indexed-ness is part of the ABI a decoder relies on (topics vs data), though not of topic0.
const INDEXED: Record<string, string> = {
  "FNSRegistry.SetRecord": "tokenId,keyIndex,valueIndex",
  "FNSRegistry.NewKey": "tokenId,keyIndex",
};

/** Canonical signature: name and input types, no names or `indexed`. */
function formatAbiItem(e: AbiEvent): string {
  return `${e.name}(${e.inputs.map((i) => i.type).join(",")})`;
}

function eventsOf(contract: ContractName): AbiEvent[] {
  return abiOf(contract).filter((i): i is AbiEvent => i.type === "event");
}

describe("devnet contracts", () => {
  const out = mkdtempSync(join(tmpdir(), "omniname-solc-"));
  beforeAll(async () => {
    await ensureArtifacts();
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("compile with solc-js into one artifact (abi + bytecode) per deployable contract", async () => {
    const script = new URL("../../scripts/compile-contracts.mjs", import.meta.url).pathname;
    const { stdout } = await promisify(execFile)(process.execPath, [script, "--out", out]);
    expect(stdout).toMatch(/compiled 2 contracts/);
    const files = readdirSync(out).sort();
    expect(files).toEqual(CONTRACT_NAMES.map((n) => `${n}.json`).sort());
    for (const f of files) {
      const a = JSON.parse(readFileSync(join(out, f), "utf8"));
      expect(a.bytecode).toMatch(/^0x[0-9a-f]{200,}$/);
      expect(Array.isArray(a.abi) && a.abi.length > 0).toBe(true);
    }
  });

  it.each(CHAIN_FACTS)("%s emits %s with the mainnet topic0", (contract, signature, topic0) => {
    const name = signature.slice(0, signature.indexOf("("));
    const matches = eventsOf(contract).filter((e) => e.name === name);
    const event = matches.find((e) => formatAbiItem(e) === signature);
    expect(
      event,
      `${contract} has no ${signature} (has ${matches.map((e) => formatAbiItem(e))})`,
    ).toBeDefined();
    expect(toEventSelector(event!)).toBe(topic0);
    const indexed = INDEXED[`${contract}.${name}`];
    if (indexed) {
      expect(
        event!.inputs
          .filter((i) => i.indexed)
          .map((i) => i.name)
          .join(","),
      ).toBe(indexed);
    }
  });

  it("keeps the FNS record event apart from UNS's: SetRecord, not Set (uns-real-abi.test.ts: UNS)", () => {
    expect(eventsOf("FNSRegistry").map((e) => e.name)).not.toContain("Set");
    expect(eventsOf("FNSRegistry").map((e) => e.name)).not.toContain("SetExpiry");
  });

  it("speaks Freename's function ABI (FNS_ABI of its SDK): same signatures and outputs", () => {
    const functions = (abi: readonly unknown[]) =>
      new Map(
        (abi as AbiFunction[])
          .filter((i) => i.type === "function")
          .map((f) => [toFunctionSignature(f), f.outputs.map((o) => o.type).join(",")]),
      );
    const freename = functions(FNS_ABI);
    const ours = functions(abiOf("FNSRegistry"));
    // What Freename's clients call: the SDK's reads and writes, and the minting manager's mints.
    const used = [
      "exists(uint256)",
      "ownerOf(uint256)",
      "tokenURI(uint256)",
      "getRecord(string,uint256)",
      "getManyRecords(string[],uint256)",
      "getAllKeys(uint256)",
      "reverseOf(address)",
      "isApprovedOrOwner(address,uint256)",
      "setRecord(string,string,uint256)",
      "setManyRecords(string[],string[],uint256)",
      "setReverse(uint256)",
      "removeReverse()",
      "transferFrom(address,address,uint256)",
      "approve(address,uint256)",
      "mint(address,uint256,string)",
      "mintWithRecords(address,uint256,string,string[],string[])",
      "reconfigure(string[],string[],uint256)",
      "reset(uint256)",
      "burn(uint256)",
      "setOwner(address,uint256)",
    ];
    for (const sig of used) {
      expect(freename.has(sig), `FNS_ABI has ${sig}`).toBe(true);
      expect(ours.get(sig), sig).toBe(freename.get(sig));
    }
    // Anything else of ours is Freename's too, or a devnet-only helper under another signature.
    const devnetOnly = [
      "getMany(string[],uint256)",
      "isController(address)",
      "mint(address,string,string)",
      "mintMany(address[],string[],string[],string[][],string[][])",
      "mintWithRecords(address,string,string,string[],string[])",
      "minter()",
      "set(string,string,uint256)",
      "setController(address,bool)",
      "tokenIdOf(string,string)",
    ];
    for (const [sig, outputs] of ours) {
      if (devnetOnly.includes(sig)) expect(freename.has(sig), sig).toBe(false);
      else expect(freename.get(sig), sig).toBe(outputs);
    }
    // Its events are Freename's too (the crawler's topics: CHAIN_FACTS above).
    const freenameEvents = new Set(
      (FNS_ABI as AbiEvent[]).filter((i) => i.type === "event").map((e) => toEventSelector(e)),
    );
    for (const e of eventsOf("FNSRegistry"))
      expect(freenameEvents.has(toEventSelector(e)), e.name).toBe(true);
  });

  it("emits no event outside the table of docs/chain-facts.md (besides ERC-721/1155 approvals)", () => {
    const known = new Set(CHAIN_FACTS.map(([c, s]) => `${c}.${s}`));
    const extra = ["ApprovalForAll(address,address,bool)", "Approval(address,address,uint256)"];
    for (const contract of CONTRACT_NAMES) {
      for (const e of eventsOf(contract)) {
        const sig = formatAbiItem(e);
        if (!extra.includes(sig)) expect(known, `${contract}.${sig}`).toContain(`${contract}.${sig}`);
      }
    }
  });
});

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type AbiEvent, toEventSelector } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTRACT_NAMES, type ContractName, abiOf, ensureArtifacts } from "./artifacts.js";

// The event table of docs/chain-facts.md for every event our devnet contracts emit:
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
  // ENS registry
  [
    "ENSRegistry",
    "NewOwner(bytes32,bytes32,address)",
    "0xce0457fe73731f824cc272376169235128c118b49d344817417c6d108d155e82",
  ],
  [
    "ENSRegistry",
    "Transfer(bytes32,address)",
    "0xd4735d920b0f87494915f556dd9b54c8f309026070caea5c737245152564d266",
  ],
  [
    "ENSRegistry",
    "NewResolver(bytes32,address)",
    "0x335721b01866dc23fbee8b6b2c7b1e14d6f05c28cd35a2c934239f94095602a0",
  ],
  [
    "ENSRegistry",
    "NewTTL(bytes32,uint64)",
    "0x1d4f9bbfc9cab89d66e1a1562f2233ccbf1308cb4f63de2ead5787adddb8fa68",
  ],
  // ENS .eth registrar
  [
    "BaseRegistrar",
    "NameRegistered(uint256,address,uint256)",
    "0xb3d987963d01b2f68493b4bdb130988f157ea43070d4ad840fee0466ed9370d9",
  ],
  [
    "BaseRegistrar",
    "NameRenewed(uint256,uint256)",
    "0x9b87a00e30f1ac65d898f070f8a3488fe60517182d0a2098e1b4b93a54aa9bd6",
  ],
  [
    "BaseRegistrar",
    "Transfer(address,address,uint256)",
    "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  ],
  // ENS wrapped controller
  [
    "ETHRegistrarController",
    "NameRegistered(string,bytes32,address,uint256,uint256,uint256)",
    "0x69e37f151eb98a09618ddaa80c8cfaf1ce5996867c489f45b555b412271ebf27",
  ],
  [
    "ETHRegistrarController",
    "NameRenewed(string,bytes32,uint256,uint256)",
    "0x3da24c024582931cfaf8267d8ed24d13a82a8068d5bd337d30ec45cea4e506ae",
  ],
  // NameWrapper
  [
    "NameWrapper",
    "NameWrapped(bytes32,bytes,address,uint32,uint64)",
    "0x8ce7013e8abebc55c3890a68f5a27c67c3f7efa64e584de5fb22363c606fd340",
  ],
  [
    "NameWrapper",
    "NameUnwrapped(bytes32,address)",
    "0xee2ba1195c65bcf218a83d874335c6bf9d9067b4c672f3c3bf16cf40de7586c4",
  ],
  [
    "NameWrapper",
    "FusesSet(bytes32,uint32)",
    "0x39873f00c80f4f94b7bd1594aebcf650f003545b74824d57ddf4939e3ff3a34b",
  ],
  [
    "NameWrapper",
    "ExpiryExtended(bytes32,uint64)",
    "0xf675815a0817338f93a7da433f6bd5f5542f1029b11b455191ac96c7f6a9b132",
  ],
  [
    "NameWrapper",
    "TransferSingle(address,address,address,uint256,uint256)",
    "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
  ],
  // Public resolver
  [
    "PublicResolver",
    "AddrChanged(bytes32,address)",
    "0x52d7d861f09ab3d26239d492e8968629f95e9e318cf0b73bfddc441522a15fd2",
  ],
  [
    "PublicResolver",
    "AddressChanged(bytes32,uint256,bytes)",
    "0x65412581168e88a1e60c6459d7f44ae83ad0832e670826c05a4e2476b57af752",
  ],
  [
    "PublicResolver",
    "TextChanged(bytes32,string,string,string)",
    "0x448bc014f1536726cf8d54ff3d6481ed3cbc683c2591ca204274009afa09b1a1",
  ],
  [
    "PublicResolver",
    "ContenthashChanged(bytes32,bytes)",
    "0xe379c1624ed7e714cc0937528a32359d69d5281337765313dba4e081b72d7578",
  ],
  [
    "PublicResolver",
    "NameChanged(bytes32,string)",
    "0xb7d29e911041e8d9b843369e890bcb72c9388692ba48b65ac54e7214c4c348f7",
  ],
  [
    "PublicResolver",
    "VersionChanged(bytes32,uint64)",
    "0xc6621ccb8f3f5a04bb6502154b2caf6adf5983fe76dfef1cfc9c42e3579db444",
  ],
  [
    "PublicResolver",
    "DNSRecordChanged(bytes32,bytes,uint16,bytes)",
    "0x52a608b3303a48862d07a73d82fa221318c0027fbbcfb1b2329bface3f19ff2b",
  ],
  [
    "PublicResolver",
    "DNSRecordDeleted(bytes32,bytes,uint16)",
    "0x03528ed0c2a3ebc993b12ce3c16bb382f9c7d88ef7d8a1bf290eaf35955a1207",
  ],
  // Reverse registrars
  [
    "ReverseRegistrar",
    "ReverseClaimed(address,bytes32)",
    "0x6ada868dd3058cf77a48a74489fd7963688e5464b2b0fa957ace976243270e92",
  ],
  [
    "DefaultReverseRegistrar",
    "NameForAddrChanged(address,string)",
    "0x8af7a4c7007a33f680904f3b64733396b730fef22d79555dee29801ca2e479a9",
  ],
];

// Indexed-ness is part of the ABI a decoder relies on (topics vs data), though not of topic0.
const INDEXED: Record<string, string> = {
  "FNSRegistry.SetRecord": "tokenId,keyIndex,valueIndex",
  "FNSRegistry.NewKey": "tokenId,keyIndex",
  "BaseRegistrar.NameRegistered": "id,owner",
  "ETHRegistrarController.NameRegistered": "label,owner",
  "NameWrapper.NameWrapped": "node",
  "NameWrapper.TransferSingle": "operator,from,to",
  "PublicResolver.TextChanged": "node,indexedKey",
  "ReverseRegistrar.ReverseClaimed": "addr,node",
  "DefaultReverseRegistrar.NameForAddrChanged": "addr",
  "ENSRegistry.NewOwner": "node,label",
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
    expect(stdout).toMatch(/compiled 8 contracts/);
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

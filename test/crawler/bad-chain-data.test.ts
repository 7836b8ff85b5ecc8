import { type Hex, encodeAbiParameters, encodeFunctionData, keccak256, pad, toHex } from "viem";
import solc from "solc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlerSource } from "../../src/crawler/crawler-source.js";
import { sourcesFromManifest } from "../../src/devnet/manifest.js";
import { DEVNET_DEPLOYER, type Devnet } from "../../src/devnet/devnet.js";
import { namehash } from "../../src/providers/namehash.js";
import { UNS_TOPICS } from "../../src/providers/uns/uns-events.js";
import { rawDb } from "../helpers/raw-db.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { crawlToHead, rpcCall, tempStore, waitFor } from "./crawler-harness.js";
import { startBareChain } from "../helpers/bare-chain.js";

// A contract that emits whatever log it is told to: chain data no honest registry produces.
const EMITTER = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract LogEmitter {
  function emit2(bytes32 a, bytes32 b, bytes calldata data) external { bytes memory d = data; assembly { log2(add(d, 32), mload(d), a, b) } }
  function emit4(bytes32 a, bytes32 b, bytes32 c, bytes32 e, bytes calldata data) external { bytes memory d = data; assembly { log4(add(d, 32), mload(d), a, b, c, e) } }
}`;

function compileEmitter(): { abi: unknown[]; bytecode: Hex } {
  const out = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "LogEmitter.sol": { content: EMITTER } },
        settings: { evmVersion: "cancun", outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
      }),
    ),
  );
  const c = out.contracts["LogEmitter.sol"].LogEmitter;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const word = (address: string) => pad(address as Hex, { size: 32 });
const str = (s: string) => encodeAbiParameters([{ type: "string" }], [s]);
const twoStrings = (a: string, b: string) =>
  encodeAbiParameters([{ type: "string" }, { type: "string" }], [a, b]);
const hashOf = (s: string) => keccak256(toHex(s));

describe("bad chain data", () => {
  let devnet: Devnet;
  let source: CrawlerSource;

  beforeAll(async () => {
    const t = await tempStore();
    devnet = await startBareChain(t.dir);
    await t.cleanup();
    const rpcUrl = devnet.manifest.networks.POLYGON!.rpcUrl;
    const { abi, bytecode } = compileEmitter();
    const send = async (tx: Record<string, string>) => {
      const hash = await rpcCall<Hex>(rpcUrl, "eth_sendTransaction", [
        { from: DEVNET_DEPLOYER, gas: "0x1c9c380", ...tx },
      ]);
      return waitFor(
        () =>
          rpcCall<{ contractAddress: string | null; status: string } | null>(
            rpcUrl,
            "eth_getTransactionReceipt",
            [hash],
          ),
        5_000,
        "receipt",
      );
    };
    const emitter = (await send({ data: bytecode })).contractAddress!.toLowerCase();
    const call = (fn: "emit2" | "emit4", args: unknown[]) =>
      send({ to: emitter, data: encodeFunctionData({ abi, functionName: fn, args }) });

    const good = namehash("good.x");
    const badName = namehash("bad name.x");
    const mint = (token: Hex) => call("emit4", [UNS_TOPICS.Transfer, pad("0x0"), word(ALICE), token, "0x"]);
    const set = (token: Hex, key: string, value: string) =>
      call("emit4", [UNS_TOPICS.Set, token, hashOf(key), hashOf(value), twoStrings(key, value)]);
    await mint(good);
    await call("emit2", [UNS_TOPICS.NewURI, good, str("good.x")]);
    await set(good, "crypto.ETH.address", ALICE);
    // A name that fails normalization, a name that does not hash to its token, a 100 KB value,
    // a value with a NUL byte, a name with a NUL byte and a truncated log.
    await mint(badName);
    await call("emit2", [UNS_TOPICS.NewURI, badName, str("bad name.x")]);
    await call("emit2", [UNS_TOPICS.NewURI, good, str("mismatch.x")]);
    await set(good, "ipfs.html.value", "Q".repeat(100_000));
    await set(good, "social.twitter.username", "ali\u0000ce");
    await call("emit2", [UNS_TOPICS.NewURI, namehash("nul\u0000.x"), str("nul\u0000.x")]);
    await call("emit2", [UNS_TOPICS.NewURI, good, "0x1234"]);

    const base = sourcesFromManifest(devnet.manifest).find((s) => s.id === "uns-polygon")!;
    source = {
      ...base,
      id: "uns-polygon-bad",
      contracts: { addresses: { registry: emitter }, startBlock: 1 },
    };
  });
  afterAll(async () => {
    await devnet?.stop();
  });

  const backends = STORE_BACKENDS.map((b) => [b.name, b.open] as const);

  it.each(backends)("is skipped or stored safely and reported, never fatal (%s)", async (_name, open) => {
    const { store, cleanup } = await open();
    try {
      const { states, status, metrics } = await crawlToHead(store, [source]);
      expect(states[source.id]).toBe("stopped");
      expect(status[0].checkpoint).toBe(status[0].head);
      expect(status[0].error).toBeNull();

      const [good] = await store.domainMap.findDomainsByName(["good.x"], {});
      expect(good.owner).toBe(ALICE);
      // The oversized value and the NUL value were refused: the good record stays, nothing else.
      expect(Object.fromEntries(good.records.map((r) => [r.key, r.value]))).toEqual({ "token.ETH.0": ALICE });
      // The token whose name failed normalization is kept under its placeholder.
      const bad = await store.domainMap.findDomainByToken("POLYGON", "NAMESPACE_B", namehash("bad name.x"));
      expect(bad?.name).toBe(`[${namehash("bad name.x").slice(2)}]`);

      const rows = await rawDb(store).selectFrom("records").select(["value", "native_value"]).execute();
      for (const r of rows) {
        expect(r.value).not.toContain("\u0000");
        expect(r.value.length).toBeLessThanOrEqual(65_536);
      }
      const counter = await metrics.registry.getSingleMetricAsString("omniname_crawler_bad_data_total");
      const skipped = [...counter.matchAll(/reason="decode"\} (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
      expect(skipped).toBe(6);
    } finally {
      await cleanup();
    }
  });
});

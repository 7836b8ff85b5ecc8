import { createPublicClient, type Hex, http, keccak256, toBytes } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Provenance } from "../../src/domain/history.js";
import { namehashId } from "../../src/devnet/token-ids.js";
import {
  type Answer,
  type ApiRecord,
  canonical,
  contractReader,
  differences,
  isZero,
  type JudgedName,
  startUnsJudgeWorld,
  type UnsJudgeWorld,
} from "./uns-judge.harness.js";

/**
 * Time travel judged by the chain: anvil keeps every block's state, so `eth_call` at block b
 * (ProxyReader.getDataForMany / registryOf / reverseOf at `blockNumber: b`) says what a UNS or
 * CNS name was at b. For every seeded name that changed in more than one block (mints, transfers,
 * record writes and resets, burns, CNS resolver moves), at each block where it changed and the
 * block before, omniname's `atBlock` answer must be the chain's.
 */
describe("UNS and CNS names at past blocks: eth_call at the block against omniname's atBlock", () => {
  let w: UnsJudgeWorld;
  const read = contractReader(() => w);
  const proxyReaderOf = (network: JudgedName["network"]) =>
    w.devnet.manifest.networks[network]!.contracts.NAMESPACE_B!.addresses.proxyReader;
  const sourceOf = (network: JudgedName["network"]) => `uns-${network.toLowerCase()}`;
  const tokenHex = (n: JudgedName) => `0x${namehashId(n.ascii).toString(16).padStart(64, "0")}`;
  /** The blocks where the journal holds an event of the key. */
  const blocksOf = async (network: JudgedName["network"], key: string) =>
    [
      ...new Set(
        (await w.store.crawlerLog.findJournalByToken(sourceOf(network), key)).map((e) => e.blockNumber),
      ),
    ].sort((a, b) => a - b);

  beforeAll(async () => {
    w = await startUnsJudgeWorld();
  }, 180_000);
  afterAll(async () => {
    await w?.close();
  });

  it("owner, records and registry of every name that changed, at each block it changed and the block before", async () => {
    const problems: string[] = [];
    let compared = 0;
    let changedNames = 0;
    for (const n of w.names) {
      const blocks = await blocksOf(n.network, tokenHex(n));
      if (blocks.length < 2) continue;
      changedNames++;
      const first = (await w.store.crawlerLog.findJournalStart(sourceOf(n.network)))!.blockNumber;
      const probes = [...new Set(blocks.flatMap((b) => [b - 1, b]))].filter((b) => b >= first);
      for (const b of probes) {
        const tag = `${n.kind} ${n.network}/${n.name} @${b}`;
        const a = proxyReaderOf(n.network);
        const token = namehashId(n.ascii);
        const [, owners, values] = await read<[string[], string[], string[][]]>(
          n.network,
          "ProxyReader",
          a,
          "getDataForMany",
          [n.nativeKeys, [token]],
          b,
        );
        const registry = (
          await read<string>(n.network, "ProxyReader", a, "registryOf", [token], b)
        ).toLowerCase();
        const owner = isZero(owners[0]) ? null : owners[0].toLowerCase();
        const chain: Answer = {
          owner,
          records: canonical(Object.fromEntries(n.nativeKeys.map((k, j) => [k, values[0][j]]))),
          registry: owner === null || isZero(registry) ? null : registry,
        };
        const r = await w.api(
          `resolve?domain=${encodeURIComponent(n.name)}&provider=NAMESPACE_B&atBlock=${n.network}:${b}`,
        );
        if (r.status !== 200 && r.status !== 404) {
          problems.push(`${tag}: API HTTP ${r.status} ${JSON.stringify(r.body)}`);
          continue;
        }
        const d = r.body.data as ApiRecord | undefined;
        const api: Answer =
          r.status === 404 || !d
            ? { owner: null, records: {}, registry: null }
            : {
                owner: d.ownerAddress,
                records: d.records,
                registry: d.info.smartContractAddress?.toLowerCase() ?? null,
              };
        problems.push(...differences(tag, chain, api, "eth_call"));
        compared++;
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    expect(changedNames).toBeGreaterThanOrEqual(5);
    expect(compared).toBeGreaterThanOrEqual(20);
  }, 300_000);

  it("reverse-resolve's primary name at each block where an address's reverse record changed", async () => {
    const problems: string[] = [];
    let compared = 0;
    let primaries = 0;
    for (const network of ["ETHEREUM", "POLYGON"] as const) {
      const first = (await w.store.crawlerLog.findJournalStart(sourceOf(network)))!.blockNumber;
      for (const address of w.addresses) {
        const blocks = await blocksOf(network, `reverse:${address}`);
        for (const b of [...new Set(blocks.flatMap((x) => [x - 1, x]))].filter((x) => x >= first)) {
          const token = await read<bigint>(
            network,
            "ProxyReader",
            proxyReaderOf(network),
            "reverseOf",
            [address],
            b,
          );
          const named =
            token === 0n
              ? undefined
              : w.names.find((n) => n.network === network && namehashId(n.ascii) === token);
          const r = await w.api(
            `reverse-resolve?walletAddress=${address}&provider=NAMESPACE_B&atBlock=${network}:${b}`,
          );
          const list = (r.body.data as ApiRecord[] | undefined) ?? [];
          // The chain's reverse record counts in omniname only when the address owns the name then.
          const owner = named
            ? (
                await read<[string[], string[], string[][]]>(
                  network,
                  "ProxyReader",
                  proxyReaderOf(network),
                  "getDataForMany",
                  [[], [token]],
                  b,
                )
              )[1][0].toLowerCase()
            : null;
          const expected = named && owner === address ? named.name : undefined;
          if (r.status !== 200) problems.push(`${network} ${address} @${b}: HTTP ${r.status}`);
          else if (expected !== undefined && list[0]?.domain !== expected)
            problems.push(
              `${network} ${address} @${b}: chain primary ${expected}, API first ${list[0]?.domain}`,
            );
          compared++;
          if (expected !== undefined) primaries++;
        }
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    expect(compared).toBeGreaterThan(3);
    expect(primaries).toBeGreaterThan(1);
  }, 300_000);

  it("provenance points at real transactions: the receipt's log at that index, in that block, sets that owner", async () => {
    const problems: string[] = [];
    let checked = 0;
    const TRANSFER = keccak256(toBytes("Transfer(address,address,uint256)"));
    for (const n of w.names) {
      const r = await w.api(
        `resolve?domain=${encodeURIComponent(n.name)}&network=${n.network}&provider=NAMESPACE_B&provenance=true`,
      );
      if (r.status !== 200) continue;
      const d = r.body.data as ApiRecord & { provenance: Provenance };
      const client = createPublicClient({ transport: http(w.devnet.manifest.networks[n.network]!.rpcUrl) });
      const origins = [
        ["owner", d.provenance.owner] as const,
        ...Object.entries(d.provenance.records).map(([k, o]) => [k, o] as const),
      ];
      for (const [what, o] of origins) {
        const tag = `${n.network}/${n.name} ${what}`;
        if (o === null) {
          problems.push(`${tag}: no provenance`);
          continue;
        }
        const receipt = await client.getTransactionReceipt({ hash: o.transactionHash as Hex });
        const block = await client.getBlock({ blockNumber: BigInt(o.blockNumber) });
        if (receipt.blockHash !== o.blockHash || Number(receipt.blockNumber) !== o.blockNumber)
          problems.push(`${tag}: receipt in block ${receipt.blockNumber} ${receipt.blockHash}`);
        if (new Date(Number(block.timestamp) * 1000).toISOString() !== o.blockTime)
          problems.push(`${tag}: block time ${block.timestamp}, provenance ${o.blockTime}`);
        const log = receipt.logs.find((l) => l.logIndex === o.logIndex);
        if (!log) problems.push(`${tag}: no log ${o.logIndex} in ${o.transactionHash}`);
        else if (what === "owner") {
          const to = log.topics[2] ? `0x${log.topics[2].slice(26)}` : null;
          if (log.topics[0] !== TRANSFER || to !== d.ownerAddress)
            problems.push(`${tag}: log ${o.logIndex} is not a Transfer to ${d.ownerAddress}`);
        }
        checked++;
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  }, 300_000);
});

import { zeroAddress } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensAdapter } from "../../src/providers/ens/ens.adapter.js";
import { readChain } from "./ens-chain-view.js";
import { type ApiRecord, type EnsJudgeWorld, resolvePath, startEnsJudgeWorld } from "./ens-judge-harness.js";

/**
 * ENS time travel judged by the chain: for every seeded ENS name that changed in more than one
 * block (registrations, wraps, transfers, resolver moves, record writes and resets, renewals), at
 * each block where its journal has an event and the block before, `atBlock` answers the owner and
 * records the real contracts return through `eth_call` at that block (ens-chain-view.ts), for a
 * project that serves expired names (ownership does not depend on the expiry clock).
 */
describe("ENS names at past blocks: eth_call at the block against omniname's atBlock", () => {
  let w: EnsJudgeWorld;

  beforeAll(async () => {
    w = await startEnsJudgeWorld();
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  it("owner and records of every name that changed, at each block it changed and the block before", async () => {
    const problems: string[] = [];
    let compared = 0;
    let changed = 0;
    const first = (await w.store.crawlerLog.findJournalStart("ens-ethereum"))!.blockNumber;
    for (const { d } of w.names) {
      const events = await w.store.crawlerLog.findJournalByToken(
        "ens-ethereum",
        ensAdapter.tokenIdOf(d.name),
      );
      const blocks = [...new Set(events.map((e) => e.blockNumber))];
      if (blocks.length < 2) continue;
      changed++;
      for (const b of [...new Set(blocks.flatMap((x) => [x - 1, x]))]
        .filter((x) => x >= first)
        .sort((x, y) => x - y)) {
        const time = Number((await w.client.getBlock({ blockNumber: BigInt(b) })).timestamp);
        const chain = await readChain(() => w, d, time, b);
        const want = chain.expired ? chain.lastOwner : chain.owner;
        const res = await w.get(`${resolvePath(d.name)}&atBlock=ETHEREUM:${b}`);
        const tag = `${d.name} @${b}`;
        compared++;
        if (want === null || want === zeroAddress) {
          if (res.status !== 404) problems.push(`${tag}: chain has no owner, API HTTP ${res.status}`);
          continue;
        }
        if (res.status !== 200) {
          problems.push(`${tag}: chain owner ${want}, API HTTP ${res.status}`);
          continue;
        }
        const api = res.body.data as ApiRecord;
        if (api.ownerAddress !== want) problems.push(`${tag}: owner API ${api.ownerAddress}, chain ${want}`);
        const sorted = (r: Record<string, string>) => JSON.stringify(Object.entries(r).sort());
        if (sorted(api.records) !== sorted(chain.records))
          problems.push(`${tag}: records API ${sorted(api.records)}, chain ${sorted(chain.records)}`);
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    expect(changed).toBeGreaterThanOrEqual(5);
    expect(compared).toBeGreaterThanOrEqual(20);
  }, 300_000);
});

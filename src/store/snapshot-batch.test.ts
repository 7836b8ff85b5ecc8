import { describe, expect, it } from "vitest";
import type { DomainRecord, DomainWrite } from "../domain/types.js";
import { safeText } from "./kysely/rows.js";
import { lastPerToken } from "./snapshot-batch.js";
import type { SnapshotDomain } from "./snapshot-sink.port.js";

/** The fold as the contract states it, written plainly (the code under test takes shortcuts). */
function reference(batch: SnapshotDomain[]): SnapshotDomain[] {
  const byToken = new Map<string, SnapshotDomain>();
  for (const b of batch) byToken.set(`${b.domain.network}|${b.domain.provider}|${b.domain.tokenId}`, b);
  const out = [...byToken.values()];
  const claimant = new Map<string, SnapshotDomain>();
  for (const b of out)
    for (const a of b.reverse) claimant.set(`${a}|${b.domain.network}|${b.domain.provider}`, b);
  return out.map((b) => {
    const records = new Map(b.records.map((r) => [safeText(r.key), r]));
    const reverse = [...new Set(b.reverse)].filter(
      (a) => claimant.get(`${a}|${b.domain.network}|${b.domain.provider}`) === b,
    );
    return { domain: b.domain, records: [...records.values()], reverse };
  });
}

function domain(tokenId: string, network: string, provider: string): DomainWrite {
  return { tokenId, network, provider, name: `n${tokenId}.wallet` } as unknown as DomainWrite;
}

const record = (key: string, value: string): DomainRecord => ({
  key,
  value,
  nativeKey: key,
  nativeValue: value,
});

describe("lastPerToken", () => {
  it("passes a batch of distinct tokens, keys and addresses through as it is", () => {
    const batch = [0, 1, 2].map((i) => ({
      domain: domain(`0x${i}`, "POLYGON", "NAMESPACE_A"),
      records: [record("a", "1"), record("b", "2")],
      reverse: i === 1 ? ["0xowner"] : [],
    }));
    const out = lastPerToken(batch);
    expect(out).toHaveLength(3);
    for (const [i, b] of out.entries()) expect(b).toBe(batch[i]);
  });

  it("keeps a token's last line at the place of its first; the same id on another network is another token", () => {
    const a1 = {
      domain: domain("0x1", "POLYGON", "NAMESPACE_A"),
      records: [record("k", "first")],
      reverse: [],
    };
    const b = {
      domain: domain("0x1", "ETHEREUM", "NAMESPACE_A"),
      records: [record("k", "other")],
      reverse: [],
    };
    const a2 = {
      domain: domain("0x1", "POLYGON", "NAMESPACE_A"),
      records: [record("k", "last")],
      reverse: [],
    };
    expect(lastPerToken([a1, b, a2])).toEqual([a2, b]);
  });

  it("keeps the last record of a key, NUL read as U+FFFD", () => {
    const d = domain("0x1", "POLYGON", "NAMESPACE_A");
    for (const keys of [
      ["x", "y", "x"],
      ["k\ufffd", "k\u0000"],
      ["k\u0000", "k\ufffd"],
      Array.from({ length: 20 }, (_, i) => `key${i % 17}`),
    ]) {
      const batch = [{ domain: d, records: keys.map((k, i) => record(k, String(i))), reverse: [] }];
      expect(lastPerToken(batch)).toEqual(reference(batch));
    }
  });

  it("agrees with the plain fold on random batches of repeated tokens, keys and addresses", () => {
    let seed = 11;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const keys = ["a", "b", "c", "a\u0000", "a\ufffd"];
    for (let round = 0; round < 500; round++) {
      const batch: SnapshotDomain[] = [];
      for (let i = next(12); i > 0; i--)
        batch.push({
          domain: domain(`0x${next(6)}`, next(4) === 0 ? "ETHEREUM" : "POLYGON", "NAMESPACE_A"),
          records: Array.from({ length: next(5) }, () => record(keys[next(keys.length)], String(next(100)))),
          reverse: Array.from({ length: next(3) }, () => `0xaddr${next(3)}`),
        });
      expect(lastPerToken(batch)).toEqual(reference(batch));
    }
  });
});

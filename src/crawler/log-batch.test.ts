import { hexToBigInt } from "viem";
import { describe, expect, it } from "vitest";
import { faultOf } from "./rpc-faults.js";
import { buildLog, hex32 } from "../providers/build-log.testing.js";
import { ALICE, ALICE_ETH, ANY, BOB, SUB, A as ENS } from "../providers/ens/ens.testing.js";
import { ensAdapter } from "../providers/ens/ens.adapter.js";
import { namehash } from "../providers/namehash.js";
import type { RawLog } from "../providers/provider.js";
import { unsAdapter } from "../providers/uns/uns.adapter.js";
import type { CrawlerSource } from "./crawler-source.js";
import { type DecodeIssue, journalEntriesOf } from "./journal-entries.js";
import { logDecoder, startLogDecoder } from "./decode-pool.js";
import { answerJob } from "./decode-worker.js";
import { type DecodedBatch, decodeLogBatch, logsOfBatch, type RpcLog, toFetchedLog } from "./log-batch.js";

const REGISTRY = "0x049aba7510f45ba5b64ea9e658e342f904db358d";
const UNS: CrawlerSource = {
  id: "uns-polygon",
  provider: "NAMESPACE_B",
  network: "POLYGON",
  chainId: 137,
  adapter: unsAdapter,
  contracts: { addresses: { registry: REGISTRY }, startBlock: 0 },
  rpcUrl: "http://127.0.0.1:1",
};
const ENS_SOURCE: CrawlerSource = {
  id: "ens-ethereum",
  provider: "NAMESPACE_C",
  network: "ETHEREUM",
  chainId: 1,
  adapter: ensAdapter,
  contracts: { addresses: ENS, startBlock: 0 },
  rpcUrl: "http://127.0.0.1:1",
};
const ZERO = "0x0000000000000000000000000000000000000000";
const BRAD = namehash("brad.crypto");

/** A RawLog as the node sends it: hex numbers, mixed-case hashes and addresses. */
function rpc(raw: RawLog, block: number, logIndex: number, extra: Partial<RpcLog> = {}): RpcLog {
  return {
    address: raw.address.toUpperCase().replace("0X", "0x"),
    topics: raw.topics,
    data: raw.data,
    blockNumber: `0x${block.toString(16)}`,
    blockHash: `0x${"AB".repeat(31)}${block.toString(16).padStart(2, "0")}`,
    logIndex: `0x${logIndex.toString(16)}`,
    transactionHash: `0x${"cd".repeat(32)}`,
    ...(block % 2 === 0 ? { blockTimestamp: `0x${(1_700_000_000 + block).toString(16)}` } : {}),
    ...extra,
  };
}

const unsLogs: RpcLog[] = [
  rpc(
    buildLog(
      "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
      { from: ZERO, to: ALICE, tokenId: hexToBigInt(BRAD) },
      REGISTRY,
    ),
    10,
    0,
  ),
  rpc(
    buildLog(
      "event NewURI(uint256 indexed tokenId, string uri)",
      { tokenId: hexToBigInt(BRAD), uri: "brad.crypto" },
      REGISTRY,
    ),
    10,
    1,
  ),
  // A name that does not hash to its token: refused.
  rpc(
    buildLog(
      "event NewURI(uint256 indexed tokenId, string uri)",
      { tokenId: 7n, uri: "brad.crypto" },
      REGISTRY,
    ),
    11,
    0,
  ),
  rpc(
    buildLog(
      "event Set(uint256 indexed tokenId, string indexed keyIndex, string indexed valueIndex, string key, string value)",
      {
        tokenId: hexToBigInt(BRAD),
        keyIndex: "crypto.ETH.address",
        valueIndex: ALICE,
        key: "crypto.ETH.address",
        value: ALICE,
      },
      REGISTRY,
    ),
    11,
    1,
  ),
  // Removed by a reorg: skipped.
  rpc(buildLog("event ResetRecords(uint256 indexed tokenId)", { tokenId: 5n }, REGISTRY), 12, 0, {
    removed: true,
  }),
  // Not the registry: refused.
  rpc(buildLog("event ResetRecords(uint256 indexed tokenId)", { tokenId: 5n }, ANY), 12, 1),
  // Unknown topic: refused.
  {
    ...rpc(buildLog("event ResetRecords(uint256 indexed tokenId)", { tokenId: 5n }, REGISTRY), 13, 0),
    topics: [hex32(1n)],
  },
];

const ensLogs: RpcLog[] = [
  // One log, two tokens: two journal rows.
  rpc(
    buildLog(
      "event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)",
      {
        operator: ANY,
        from: ALICE,
        to: BOB,
        ids: [hexToBigInt(ALICE_ETH), hexToBigInt(SUB)],
        values: [1n, 1n],
      },
      ENS.nameWrapper,
    ),
    20,
    3,
  ),
];

function direct(source: CrawlerSource, logs: RpcLog[]) {
  const issues: DecodeIssue[] = [];
  const fetched = logs.filter((l) => !l.removed).map((l) => toFetchedLog(l, source.chainId));
  return { entries: journalEntriesOf(source, fetched, new Map([[11, 42]]), issues), issues };
}

function viaBatch(source: CrawlerSource, batch: DecodedBatch) {
  const issues: DecodeIssue[] = [];
  const logs = logsOfBatch(batch, source.chainId);
  return { entries: journalEntriesOf(source, logs, new Map([[11, 42]]), issues), issues };
}

const bodyOf = (result: unknown) =>
  new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: 1, result })).buffer;

describe("decoded log batches", () => {
  it.each([
    ["UNS", UNS, unsLogs],
    ["ENS", ENS_SOURCE, ensLogs],
  ] as const)(
    "give the journal entries and issues of decoding on the main thread (%s)",
    (_, source, logs) => {
      const batch = decodeLogBatch(logs, source.adapter, source.contracts, source.chainId, {
        from: 0,
        to: 100,
      });
      const want = direct(source, logs);
      expect(viaBatch(source, batch)).toEqual(want);
      expect(want.entries.length).toBeGreaterThan(0);
      expect(batch.outOfRange).toBeNull();
    },
  );

  it("covers accepted, refused and multi-token logs", () => {
    const uns = direct(UNS, unsLogs);
    expect(uns.entries.map((e) => [e.blockNumber, e.logIndex, e.blockTime])).toEqual([
      [10, 0, 1_700_000_010],
      [10, 1, 1_700_000_010],
      [11, 1, 42],
    ]);
    expect(uns.issues.map((i) => [i.blockNumber, i.logIndex])).toEqual([
      [11, 0],
      [12, 1],
      [13, 0],
    ]);
    expect(direct(ENS_SOURCE, ensLogs).entries.map((e) => e.tokenId)).toEqual([ALICE_ETH, SUB]);
  });

  it("reports the first log outside the asked range", () => {
    expect(decodeLogBatch(unsLogs, unsAdapter, UNS.contracts, 137, { from: 10, to: 11 }).outOfRange).toBe(12);
  });
});

describe("the decode worker", () => {
  const job = { provider: UNS.provider, contracts: UNS.contracts, chainId: 137, from: 0, to: 100 };

  it("starts, and answers as the main thread would", async () => {
    expect(await startLogDecoder()).toBe(true);
    const reply = (await logDecoder.decode(bodyOf(unsLogs), job)) as { result: DecodedBatch };
    const { message } = answerJob({ ...job, id: 0, body: bodyOf(unsLogs) });
    expect(reply).toEqual((message as { reply: unknown }).reply);
    expect(viaBatch(UNS, reply.result)).toEqual(direct(UNS, unsLogs));
  });

  it("passes error replies through, and fails malformed JSON with a retryable fault", async () => {
    const error = {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32005, message: "query returned more than 10000 results" },
    };
    expect(await logDecoder.decode(new TextEncoder().encode(JSON.stringify(error)).buffer, job)).toEqual(
      error,
    );
    const e = await logDecoder
      .decode(new TextEncoder().encode("{not json").buffer, job)
      .catch((x: unknown) => x);
    expect(faultOf(e)?.fault).toBe("server");
  });
});

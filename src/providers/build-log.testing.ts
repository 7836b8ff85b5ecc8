import { type AbiEvent, encodeAbiParameters, encodeEventTopics, parseAbiItem } from "viem";
import type { Hex, RawLog } from "./provider.js";

/**
 * Test support: builds a RawLog from an exact event signature with viem's encoders, so the
 * adapters' hand-written decoders are checked against an independent ABI implementation.
 *
 * @example buildLog("event NewURI(uint256 indexed tokenId, string uri)", { tokenId: 1n, uri: "a.crypto" }, REGISTRY)
 */
export function buildLog(signature: string, args: Record<string, unknown>, address: string): RawLog {
  const event = parseAbiItem(signature) as AbiEvent;
  const topics = encodeEventTopics({
    abi: [event],
    eventName: event.name,
    args: args as never,
  }) as Hex[];
  const dataInputs = event.inputs.filter((i) => !i.indexed);
  const data =
    dataInputs.length === 0
      ? "0x"
      : encodeAbiParameters(dataInputs, dataInputs.map((i) => args[i.name ?? ""]) as never);
  return {
    chainId: 1,
    blockNumber: 100,
    blockHash: `0x${"ab".repeat(32)}`,
    logIndex: 0,
    transactionHash: `0x${"cd".repeat(32)}`,
    address: address.toLowerCase(),
    topics,
    data: data as Hex,
  };
}

/** A 32-byte hex value from a bigint (token ids). */
export function hex32(n: bigint): Hex {
  return `0x${n.toString(16).padStart(64, "0")}`;
}

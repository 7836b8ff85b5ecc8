import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type AbiEvent, encodeAbiParameters, encodeEventTopics } from "viem";
import type { Hex, RawLog } from "../provider.js";

/**
 * Test support: the event ABIs of the real ENS contracts, as compiled in
 * `@unstoppabledomains/uns/artifacts` (not our devnet copies), and a log builder that encodes with
 * them, so the adapter is judged against an ABI we did not write.
 */
export const REAL_ENS_ARTIFACTS = [
  "ENSRegistry",
  "BaseRegistrarImplementation",
  "ETHRegistrarController",
  "LegacyETHRegistrarController",
  "NameWrapper",
  "PublicResolver",
  "ReverseRegistrar",
] as const;
export type RealEnsArtifact = (typeof REAL_ENS_ARTIFACTS)[number];

const require = createRequire(import.meta.url);

/** The events of one real artifact. */
export function realEvents(artifact: RealEnsArtifact): AbiEvent[] {
  const file = require.resolve(`@unstoppabledomains/uns/artifacts/${artifact}.json`);
  const json = JSON.parse(readFileSync(file, "utf8")) as { abi: Array<{ type: string }> };
  return json.abi.filter((x): x is AbiEvent => x.type === "event");
}

/** A RawLog of `eventName` encoded with the real artifact's ABI. */
export function realLog(
  artifact: RealEnsArtifact,
  eventName: string,
  args: Record<string, unknown>,
  address: string,
): RawLog {
  const event = realEvents(artifact).find((e) => e.name === eventName);
  if (event === undefined) throw new Error(`${artifact} has no event ${eventName}`);
  const topics = encodeEventTopics({ abi: [event], eventName, args: args as never }) as Hex[];
  const dataInputs = event.inputs.filter((i) => !i.indexed);
  const data = encodeAbiParameters(dataInputs, dataInputs.map((i) => args[i.name ?? ""]) as never);
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

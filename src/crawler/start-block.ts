import type { Logger } from "pino";
import type { ChainReader } from "./chain-reader.js";
import type { CrawlerSource } from "./crawler-source.js";

/**
 * The first block a new source reads: its configured start block, or, when the deployment block
 * is not published (`discoverStartBlock`), the earliest deployment of its contracts, found by
 * bisecting eth_getCode.
 */
export async function findStartBlock(
  reader: ChainReader,
  source: CrawlerSource,
  log: Logger,
): Promise<number> {
  const configured = source.contracts.startBlock;
  if (!source.discoverStartBlock) return configured;
  const head = await reader.head();
  let first: number | null = null;
  for (const address of new Set(Object.values(source.contracts.addresses))) {
    const b = await reader.deployBlock(address, head);
    if (b !== null && (first === null || b < first)) first = b;
  }
  log.info({ deployBlock: first }, "start block found by bisecting eth_getCode");
  return first ?? configured;
}

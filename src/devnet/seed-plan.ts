import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { OffchainEnsWorld } from "./fixtures.js";
import type { TxRequest } from "./tx-sender.js";

/**
 * The shape the seeder needs of a world (FixtureWorld satisfies it). Keys and values are NATIVE:
 * ENS `addr.<coinType>` (hex; 0x address for 60), `text.<key>`, `contenthash` (hex), `dns.<TYPE>`
 * (RRset wire, hex); FNS/UNS keys verbatim.
 */
export interface SeedDomain {
  provider: Provider;
  network: Network;
  /** Normalized Unicode. */
  name: string;
  /** Lower-case address after `history`. */
  owner: string;
  records: ReadonlyArray<readonly [string, string]>;
  /** Epoch ms. */
  registeredAt: number;
  /** Epoch ms, null = no expiry. */
  expiresAt: number | null;
  reverse: boolean;
  history?: {
    previousOwners?: readonly string[];
    resetRecordsBefore?: ReadonlyArray<readonly [string, string]>;
  };
}

export interface SeedWorld {
  domains: readonly SeedDomain[];
  /** ENS names answered by the devnet's gateway (fixtures.ts); seeded on ETHEREUM when present. */
  ensOffchain?: OffchainEnsWorld;
}

/** Transactions to mine in one block at `at` (epoch seconds). */
export interface SeedStep {
  at: number;
  txs: TxRequest[];
  /** For ordering checks: a step that needs another name registered first. */
  requires?: string;
  registers?: string;
}

/** Every owner in order, ending with the current one: the mint goes to the first. */
export function ownerChain(d: SeedDomain): string[] {
  return [...(d.history?.previousOwners ?? []), d.owner];
}

/** The records present at registration: the pre-reset ones when the history has a reset. */
export function initialRecords(d: SeedDomain): ReadonlyArray<readonly [string, string]> {
  return d.history?.resetRecordsBefore ?? d.records;
}

/** Last value wins when a key repeats, as on chain. */
export function recordMap(records: ReadonlyArray<readonly [string, string]>): Map<string, string> {
  return new Map(records.map(([k, v]) => [k, v]));
}

/** Seconds after the registration at which transfers, resets and reverse records happen. */
export const UPDATE_DELAY = 600;

export function toSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

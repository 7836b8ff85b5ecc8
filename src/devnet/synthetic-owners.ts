import { type Hex, keccak256, stringToBytes } from "viem";

/**
 * Owners for benchmark and simulated names: addresses derived from a tag, never one of the
 * fixture world's owners, so that simulated reverse records and bulk names leave the fixture
 * world's answers (reverse-resolve of alice, …) unchanged. Nobody holds their keys; the minter
 * acts for them.
 *
 * @example syntheticOwners("sim", 9) // nine fixed addresses
 */
export function syntheticOwners(tag: string, count: number): Hex[] {
  return Array.from(
    { length: count },
    (_, i) => `0x${keccak256(stringToBytes(`omniname-${tag}-owner:${i}`)).slice(26)}` as Hex,
  );
}

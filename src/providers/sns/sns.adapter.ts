import type { Address } from "@solana/kit";
import { normalizeName } from "../../domain/names.js";
import type { Network } from "../../domain/networks.js";
import { fail } from "../log-decode.js";
import type { ProviderAdapter, SourceContracts } from "../provider.js";
import { domainKeyOf, SNS_PROGRAMS } from "./sns-program.js";
import { canonicalKeyOf } from "./sns-records.js";
import { snsTokenId } from "./sns-state.js";

/** Mainnet programs (docs/chain-facts.md); a Solana source reads accounts, so there is no start block. */
export const SNS_MAINNET = {
  SOLANA: {
    addresses: { ...SNS_PROGRAMS },
    startBlock: 0,
  },
} as const satisfies Partial<Record<Network, SourceContracts>>;

/**
 * The Solana Name Service (NAMESPACE_D). Not a log decoder: the SNS source (crawler/sns-sync.ts)
 * reads the programs' accounts and turns each name's state into events (sns-state.ts). A token id
 * is the name account's 32 bytes as hex; addresses are base58 and case-sensitive, kept as they are.
 *
 * @example snsAdapter.tokenIdOf("bonfida.sol") // the hex of the name account Crf8hzfth…
 */
export const snsAdapter: ProviderAdapter = {
  protocol: "SNS",
  provider: "NAMESPACE_D",
  networks: ["SOLANA"],
  mainnet: SNS_MAINNET,
  filters: () => [],
  decode: () => fail("SNS is read from accounts (crawler/sns-sync.ts), not from logs"),
  mapRecord(nativeKey, nativeValue) {
    return nativeValue === "" ? [] : [{ key: canonicalKeyOf(nativeKey), value: nativeValue }];
  },
  tokenIdOf(name) {
    const key = domainKeyOf(name);
    // A name deeper than a subdomain has no SNS account: a token id no account has.
    return key ? snsTokenId(key as Address) : `0x${"0".repeat(64)}`;
  },
  normalizeName,
};

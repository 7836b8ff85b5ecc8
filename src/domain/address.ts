import { isAddress } from "@solana/kit";

// The 0x prefix in either case, as the hex digits: what people paste (0XF39F…) is accepted.
const HEX_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

/**
 * Normalizes an EVM address to lower case. Mixed-case input must carry a valid EIP-55 checksum
 * only when `strictChecksum` is set; partners paste addresses in every case, so the API is lenient.
 * Returns `null` for anything that is not a 20-byte hex address; the result is `0x` + lower-case hex.
 */
export function normalizeAddress(input: string): string | null {
  const s = input.trim();
  if (!HEX_ADDRESS.test(s)) return null;
  return s.toLowerCase();
}

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/**
 * A wallet address as reverse resolution takes it: an EVM address in lower case (normalizeAddress),
 * or a Solana address (base58 of 32 bytes, checked by @solana/kit), kept exactly as given: base58
 * is case-sensitive, so it is never lower-cased. Returns `null` for anything else.
 *
 * @example normalizeWalletAddress("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU") // unchanged
 */
export function normalizeWalletAddress(input: string): string | null {
  const evm = normalizeAddress(input);
  if (evm !== null) return evm;
  const s = input.trim();
  return isAddress(s) ? s : null;
}

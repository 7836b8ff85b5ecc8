import { type Hex, concat, keccak256, labelhash, namehash, stringToBytes, toHex } from "viem";

/**
 * Token ids as the devnet registries compute them (and as the mainnet ones do), so the seeder and
 * the exactness checks can address a name without asking the chain.
 */

/**
 * Freename: not a namehash. TLD = keccak256(tld); SLD = keccak256(tld ‖ uint256(keccak256(sld))),
 * over the punycode ASCII labels, `sld` being everything left of the TLD.
 *
 * @example fnsTokenId("cederico.metaverse") // 27852860280769187492768842851433555806350745604062440243777647496936527137670n
 */
export function fnsTokenId(asciiName: string): bigint {
  const i = asciiName.lastIndexOf(".");
  const tld = i < 0 ? asciiName : asciiName.slice(i + 1);
  if (i < 0) return BigInt(keccak256(stringToBytes(tld)));
  const sldHash = keccak256(stringToBytes(asciiName.slice(0, i)));
  return BigInt(keccak256(concat([toHex(stringToBytes(tld)), sldHash])));
}

/** EIP-137 namehash as a uint256 (UNS token ids, ENS NameWrapper ids). */
export function namehashId(name: string): bigint {
  return BigInt(namehash(name));
}

export { labelhash, namehash };

/** DNS wire encoding of a name (labels as UTF-8), as NameWrapper's `NameWrapped` carries it. */
export function dnsEncode(name: string): Hex {
  const parts: Uint8Array[] = [];
  for (const label of name.split(".").filter((l) => l.length > 0)) {
    const bytes = stringToBytes(label);
    if (bytes.length > 255) throw new RangeError(`label longer than 255 bytes: ${label.slice(0, 32)}…`);
    parts.push(Uint8Array.of(bytes.length), bytes);
  }
  parts.push(Uint8Array.of(0));
  return toHex(concat(parts));
}

/** The ENS reverse node of an address: namehash(`<hex address without 0x>.addr.reverse`). */
export function reverseNode(address: string): Hex {
  return namehash(`${address.toLowerCase().slice(2)}.addr.reverse`);
}

/** A token id as the 0x-prefixed 64-hex form the adapters use. */
export function tokenIdHex(id: bigint): Hex {
  return `0x${id.toString(16).padStart(64, "0")}`;
}

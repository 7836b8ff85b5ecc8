import { createKeccak } from "hash-wasm";
import punycode from "punycode/punycode.js";
import type { Hex } from "./provider.js";

// Keccak dominates decoding: every published name is hashed to check it against its token id.
// viem's keccak256 (noble, pure JS) costs ~11-20 µs a hash on this machine, hash-wasm's WebAssembly
// keccak ~0.7 µs. One hasher, used synchronously (init, update, digest with nothing in between), so
// concurrent callers on this thread cannot interleave.
const hasher = await createKeccak(256);

/** keccak256 of bytes, or of a string's UTF-8 bytes, as 32 bytes. */
export function keccak256Bytes(data: Uint8Array | string): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest("binary");
}

/**
 * keccak256 of bytes, or of a string's UTF-8 bytes, as lower-case 0x hex (viem's `keccak256`
 * of `toBytes(data)`).
 *
 * @example keccak256("eth") // "0x4f5b812789fc606be1b3b16908db13fc7a9adf7ca72641f84d75b47069d3d7f0"
 */
export function keccak256(data: Uint8Array | string): Hex {
  hasher.init();
  hasher.update(data);
  return `0x${hasher.digest("hex")}` as Hex;
}

const hexOf = (bytes: Uint8Array): Hex =>
  `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}` as Hex;
const bytesOf = (hex: string): Uint8Array => Buffer.from(hex.startsWith("0x") ? hex.slice(2) : hex, "hex");

const utf8 = new TextEncoder();
const ZERO32 = new Uint8Array(32);
// An ENS label never seen in plaintext is written `[<labelhash hex>]` (ENS subgraph convention).
const ENCODED_LABEL = /^\[[0-9a-fA-F]{64}\]$/;

function labelhashBytes(label: string): Uint8Array {
  if (label.length === 66 && ENCODED_LABEL.test(label)) return bytesOf(label.slice(1, 65));
  return keccak256Bytes(label);
}

/**
 * EIP-137 labelhash: keccak256 of the UTF-8 label. An encoded label `[<64 hex>]` stands for its hash.
 *
 * @example labelhash("eth") // "0x4f5b812789fc606be1b3b16908db13fc7a9adf7ca72641f84d75b47069d3d7f0"
 */
export function labelhash(label: string): Hex {
  return hexOf(labelhashBytes(label));
}

/**
 * EIP-137 namehash of a name that is already normalized (the caller normalizes: ENSIP-15 for ENS).
 * The empty name is the root (32 zero bytes).
 *
 * @example namehash("crypto") // "0x0f4a10a4f46c288cea365fcf45cccf0e9d901b945b9829ccdb54c10dc3cb7a6f"
 */
export function namehash(name: string): Hex {
  if (name === "") return hexOf(ZERO32);
  const labels = name.split(".");
  // One 64-byte scratch buffer: [node ‖ labelhash], hashed in place label by label (right to left).
  const buf = new Uint8Array(64);
  buf.set(topNode(labels[labels.length - 1]), 0);
  for (let i = labels.length - 2; i >= 0; i--) {
    buf.set(labelhashBytes(labels[i]), 32);
    buf.set(keccak256Bytes(buf), 0);
  }
  return hexOf(buf.subarray(0, 32));
}

// The few TLDs recur in every name: their nodes are memoized. Bounded so that hostile names cannot
// grow it without limit.
const topNodes = new Map<string, Uint8Array>();
function topNode(tld: string): Uint8Array {
  let node = topNodes.get(tld);
  if (node === undefined) {
    const buf = new Uint8Array(64);
    buf.set(labelhashBytes(tld), 32);
    node = keccak256Bytes(buf);
    if (topNodes.size >= 4096) topNodes.clear();
    topNodes.set(tld, node);
  }
  return node;
}

/** The node of `labelHash` under `parent`: keccak256(parent ‖ labelHash), as the ENS registry computes it. */
export function childNode(parent: Hex, labelHash: Hex): Hex {
  const buf = new Uint8Array(64);
  buf.set(bytesOf(parent), 0);
  buf.set(bytesOf(labelHash), 32);
  return keccak256(buf);
}

export const ETH_NODE: Hex = "0x93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae";
export const ADDR_REVERSE_NODE: Hex = "0x91d1777781884d03a6757a803996e38de2a42967fb37eeaca72729271025a9e2";

/**
 * The ENS reverse node of an address: namehash("<lower-case hex without 0x>.addr.reverse").
 * Pure, so a ReverseClaimed(addr, node) log can be checked rather than trusted.
 */
export function reverseNode(address: string): Hex {
  const buf = new Uint8Array(64);
  buf.set(ADDR_REVERSE_BYTES, 0);
  buf.set(keccak256Bytes(address.toLowerCase().replace(/^0x/, "")), 32);
  return keccak256(buf);
}
const ADDR_REVERSE_BYTES = bytesOf(ADDR_REVERSE_NODE);

function asciiLabel(label: string): string {
  // Freename hashes the IDNA ASCII form; a label that is already ASCII is used as is.
  return /^[\x00-\x7f]*$/.test(label) ? label : `xn--${punycode.encode(label)}`;
}

/**
 * The Freename (FNS) token id, which is NOT a namehash. TLD: uint256(keccak256(bytes(tld))). SLD:
 * uint256(keccak256(abi.encodePacked(bytes(tld), uint256(keccak256(bytes(sld)))))), over punycode
 * ASCII labels. Everything left of the TLD counts as the SLD (Freename documents two levels only;
 * a deeper name is hashed the same way, which is unconfirmed).
 *
 * @example fnsTokenId("cederico.metaverse") // 0x3d93… = 27852860280769187492768842851433555806350745604062440243777647496936527137670
 */
export function fnsTokenId(name: string): Hex {
  const dot = name.lastIndexOf(".");
  const tld = utf8.encode(asciiLabel(dot < 0 ? name : name.slice(dot + 1)));
  if (dot < 0) return keccak256(tld);
  const sld = name.slice(0, dot).split(".").map(asciiLabel).join(".");
  const buf = new Uint8Array(tld.length + 32);
  buf.set(tld, 0);
  buf.set(keccak256Bytes(sld), tld.length);
  return keccak256(buf);
}

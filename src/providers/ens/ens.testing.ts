import dnsPacket from "dns-packet";
import { bytesToHex } from "viem";
import { buildLog } from "../build-log.testing.js";
import { labelhash, namehash } from "../namehash.js";
import type { DecodeResult, Hex, RawLog } from "../provider.js";
import { ENS_MAINNET, ensAdapter } from "./ens.adapter.js";

/** Shared fixtures of the ENS decoder tests: mainnet roles, actors, nodes and log builders. */
export const C = ENS_MAINNET.ETHEREUM;
export const A = C.addresses;
export const ANY = "0x1234567890123456789012345678901234567890";
export const ALICE = "0x00000000000000000000000000000000000a11ce";
export const BOB = "0x0000000000000000000000000000000000000b0b";
export const ZERO = "0x0000000000000000000000000000000000000000";
export const ALICE_ETH = namehash("alice.eth");
export const SUB = namehash("sub.alice.eth");
export const ALICE_LABEL = labelhash("alice");

export const log = (sig: string, args: Record<string, unknown>, address: string): RawLog =>
  buildLog(sig, args, address);
export const decode = (raw: RawLog): DecodeResult => ensAdapter.decode(raw, C);

/** DNS wire encoding of a name, as NameWrapper and DNSResolver carry it. */
export function wire(name: string): Hex {
  const parts = name === "" ? [] : name.split(".");
  const bytes: number[] = [];
  for (const p of parts) bytes.push(Buffer.byteLength(p), ...Buffer.from(p));
  return bytesToHex(new Uint8Array([...bytes, 0]));
}

// @types/dns-packet lacks the single-RR codec.
const answer = (dnsPacket as unknown as { answer: { encode(a: unknown): Buffer } }).answer;
export const rrs = (...answers: unknown[]): Hex =>
  bytesToHex(Buffer.concat(answers.map((a) => answer.encode(a))));

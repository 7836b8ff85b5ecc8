import {
  type Hex,
  bytesToString,
  decodeFunctionData,
  encodeAbiParameters,
  encodePacked,
  hexToBytes,
  isAddress,
  isHex,
  keccak256,
  namehash,
  parseAbi,
  zeroAddress,
} from "viem";
import { privateKeyToAccount, sign } from "viem/accounts";

/**
 * What the devnet's CCIP-Read gateway answers (ens-gateway.ts serves it over HTTP): the pure part,
 * from a request's `sender` and `callData` to the body's `data`, the way ENS's reference gateway
 * (ensdomains/offchain-resolver, packages/gateway) answers for its OffchainResolver, which
 * contracts/ens-offchain/OffchainResolver.sol mirrors.
 *
 * @example
 * const data = answerGatewayCall({ sender, callData, records, signerKey, expires: now + 300 });
 * // → abi.encode(bytes result, uint64 expires, bytes sig)
 */

/**
 * The devnet gateway's signing key: deterministic (a hash of a fixed phrase, not one of anvil's
 * funded accounts), so that the resolver deployed with its address trusts every devnet's gateway.
 * A devnet key: it signs nothing but local test answers.
 */
export const DEVNET_GATEWAY_KEY: Hex = keccak256(
  new TextEncoder().encode("omniname devnet ENS gateway signer"),
);
export const DEVNET_GATEWAY_SIGNER: Hex = privateKeyToAccount(
  DEVNET_GATEWAY_KEY,
).address.toLowerCase() as Hex;

/** The resolver's `resolve(bytes,bytes)` (ENSIP-10 and the gateway's service call share it). */
const SERVICE_ABI = parseAbi(["function resolve(bytes name, bytes data) view returns (bytes)"]);

/** The inner calls the gateway answers: the records omniname and the ENS clients ask. */
const RESOLVER_ABI = parseAbi([
  "function addr(bytes32 node) view returns (address)",
  "function addr(bytes32 node, uint256 coinType) view returns (bytes)",
  "function text(bytes32 node, string key) view returns (string)",
  "function contenthash(bytes32 node) view returns (bytes)",
]);

/** A request the gateway refuses (answered with a 4xx and this message). */
export class GatewayRequestError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/**
 * A DNS wire-format name (RFC 1035 §3.1, as ENSIP-10 passes it) as dotted text. viem encodes
 * (`packetToBytes`, internal) but has no decoder. Labels are taken as UTF-8; a malformed packet
 * is refused rather than guessed.
 */
export function dnsDecodeName(encoded: Hex): string {
  const bytes = hexToBytes(encoded);
  const labels: string[] = [];
  let i = 0;
  for (;;) {
    if (i >= bytes.length) throw new GatewayRequestError("the DNS-encoded name has no terminating zero");
    const len = bytes[i];
    if (len === 0) break;
    if (i + 1 + len > bytes.length)
      throw new GatewayRequestError("a label of the DNS-encoded name overruns it");
    labels.push(bytesToString(bytes.subarray(i + 1, i + 1 + len)));
    i += 1 + len;
  }
  if (i !== bytes.length - 1) throw new GatewayRequestError("bytes follow the DNS-encoded name's end");
  return labels.join(".");
}

/** keccak256(0x1900 ‖ target ‖ expires ‖ keccak256(request) ‖ keccak256(result)): OffchainResolver.signatureHash. */
export function gatewaySignatureHash(target: Hex, expires: bigint, request: Hex, result: Hex): Hex {
  return keccak256(
    encodePacked(
      ["bytes", "address", "uint64", "bytes32", "bytes32"],
      ["0x1900", target, expires, keccak256(request), keccak256(result)],
    ),
  );
}

export interface GatewayCall {
  /** The resolver that reverted with OffchainLookup (EIP-3668 `sender`). */
  sender: Hex;
  /** `resolve(bytes name, bytes data)` as the resolver passed it (`callData`). */
  callData: Hex;
}

/** The name and inner call of a request, checked: the inner call's node must be the name's. */
export function decodeGatewayCall(callData: Hex): { name: string; call: string; args: readonly unknown[] } {
  let outer: { args: readonly unknown[] };
  try {
    outer = decodeFunctionData({ abi: SERVICE_ABI, data: callData });
  } catch (e) {
    throw new GatewayRequestError(
      `callData is not resolve(bytes,bytes): ${(e as Error).message.split("\n")[0]}`,
    );
  }
  const [encodedName, inner] = outer.args as [Hex, Hex];
  const name = dnsDecodeName(encodedName);
  let decoded: { functionName: string; args?: readonly unknown[] };
  try {
    decoded = decodeFunctionData({ abi: RESOLVER_ABI, data: inner });
  } catch {
    throw new GatewayRequestError(`unsupported resolver call ${inner.slice(0, 10)}`);
  }
  const args = decoded.args ?? [];
  if ((args[0] as Hex).toLowerCase() !== namehash(name)) {
    throw new GatewayRequestError(`the call's node is not the namehash of ${name}`);
  }
  return { name, call: decoded.functionName, args };
}

/**
 * The ABI-encoded result of an inner call over `records` (native ENS keys: `addr.<coinType>`,
 * `text.<key>`, `contenthash`); a missing record is the empty answer a storage resolver gives.
 */
export function encodeRecordAnswer(
  call: string,
  args: readonly unknown[],
  records: ReadonlyMap<string, string>,
): Hex {
  if (call === "addr" && args.length === 1) {
    return encodeAbiParameters([{ type: "address" }], [(records.get("addr.60") ?? zeroAddress) as Hex]);
  }
  if (call === "addr") {
    const value = (records.get(`addr.${args[1] as bigint}`) ?? "0x") as Hex;
    return encodeAbiParameters([{ type: "bytes" }], [value]);
  }
  if (call === "text") {
    return encodeAbiParameters([{ type: "string" }], [records.get(`text.${args[1] as string}`) ?? ""]);
  }
  if (call === "contenthash") {
    return encodeAbiParameters([{ type: "bytes" }], [(records.get("contenthash") ?? "0x") as Hex]);
  }
  throw new GatewayRequestError(`unsupported resolver call ${call}`);
}

export interface GatewayAnswerOptions extends GatewayCall {
  /** Records of a name (native keys); null = the name is unknown (answered with empty records). */
  recordsOf(name: string): ReadonlyMap<string, string> | null;
  signerKey: Hex;
  /** Seconds: the answer's `expires`. */
  expires: number;
}

/** The body's `data`: abi.encode(bytes result, uint64 expires, bytes sig), signed as the resolver checks. */
export async function answerGatewayCall(o: GatewayAnswerOptions): Promise<{ name: string; data: Hex }> {
  if (!isAddress(o.sender, { strict: false })) throw new GatewayRequestError("sender is not an address");
  if (!isHex(o.callData)) throw new GatewayRequestError("data is not hex");
  const { name, call, args } = decodeGatewayCall(o.callData);
  const result = encodeRecordAnswer(call, args, o.recordsOf(name) ?? new Map());
  const expires = BigInt(o.expires);
  const hash = gatewaySignatureHash(o.sender, expires, o.callData, result);
  const sig = await sign({ hash, privateKey: o.signerKey, to: "hex" });
  return {
    name,
    data: encodeAbiParameters(
      [{ type: "bytes" }, { type: "uint64" }, { type: "bytes" }],
      [result, expires, sig],
    ),
  };
}

import {
  type Address,
  type Base58EncodedBytes,
  type Commitment,
  createSolanaRpcFromTransport,
  isSolanaError,
  type RpcTransport,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SolanaError,
} from "@solana/kit";
import { addressOf } from "../providers/sns/sns-program.js";
import type { RawAccount } from "../providers/sns/sns-state.js";

/** A `getProgramAccounts` filter: bytes (base58) at an offset, or an exact data size. */
export type AccountFilter = { memcmp: { offset: number; bytes: string } } | { dataSize: number };

/**
 * The Solana JSON-RPC calls the SNS source makes, over @solana/kit's RPC client, at one
 * commitment (`finalized` for the map). Account data comes back base64 and is decoded here.
 *
 * @example const r = createSolanaReader(url); await r.programAccounts(program, [{ memcmp: { offset: 0, bytes: root } }]);
 */
export interface SolanaReader {
  slot(): Promise<number>;
  programAccounts(program: Address, filters: AccountFilter[]): Promise<RawAccount[]>;
  multipleAccounts(keys: readonly Address[]): Promise<Array<RawAccount | null>>;
  /** The holder of a mint's largest token account when it holds exactly 1; null for none or an unknown mint. */
  nftHolder(mint: Address): Promise<Address | null>;
  /** `nftHolder` with the token account that holds the 1 (what the source watches for NFT transfers). */
  nftHolding(mint: Address): Promise<{ holder: Address; tokenAccount: Address } | null>;
}

const bytesOf = (data: readonly [string, string]) => new Uint8Array(Buffer.from(data[0], "base64"));

/**
 * kit's RPC over HTTP, its body parsed by JSON.parse. kit's own transport parses every answer
 * with exact u64 integers by first copying the body one character at a time into an array: for a
 * `getProgramAccounts` of 40,000 name accounts that held about 550 MB at once and took most of
 * the read's time. kit's response transformers still turn every integer into a bigint; an
 * integer above 2^53 (only an account's `rentEpoch`, which this reader never reads) loses its
 * last digits.
 */
function jsonTransport(url: string): RpcTransport {
  const transport = async ({ payload, signal }: Parameters<RpcTransport>[0]) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(payload, (_, v) => (typeof v === "bigint" ? Number(v) : v)),
      signal,
    });
    if (!res.ok)
      throw new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, {
        headers: res.headers,
        message: res.statusText,
        statusCode: res.status,
      });
    return JSON.parse(await res.text());
  };
  return transport as RpcTransport;
}

export function createSolanaReader(url: string, commitment: Commitment = "finalized"): SolanaReader {
  const rpc = createSolanaRpcFromTransport(jsonTransport(url));
  return {
    async slot() {
      return Number(await rpc.getSlot({ commitment }).send());
    },
    async programAccounts(program, filters) {
      const list = await rpc
        .getProgramAccounts(program, {
          commitment,
          encoding: "base64",
          filters: filters.map((f) =>
            "dataSize" in f
              ? { dataSize: BigInt(f.dataSize) }
              : {
                  memcmp: {
                    offset: BigInt(f.memcmp.offset),
                    bytes: f.memcmp.bytes as Base58EncodedBytes,
                    encoding: "base58" as const,
                  },
                },
          ),
        })
        .send();
      return list.map((a) => ({ address: a.pubkey, data: bytesOf(a.account.data) }));
    },
    async multipleAccounts(keys) {
      const out: Array<RawAccount | null> = [];
      for (let i = 0; i < keys.length; i += 100) {
        const page = keys.slice(i, i + 100);
        const r = await rpc.getMultipleAccounts(page, { commitment, encoding: "base64" }).send();
        r.value.forEach((a, j) => {
          out.push(a ? { address: page[j], data: bytesOf(a.data) } : null);
        });
      }
      return out;
    },
    async nftHolder(mint) {
      return (await this.nftHolding(mint))?.holder ?? null;
    },
    async nftHolding(mint) {
      try {
        const largest = await rpc.getTokenLargestAccounts(mint, { commitment }).send();
        const top = largest.value[0];
        if (top?.amount !== "1") return null;
        const [acc] = await this.multipleAccounts([top.address]);
        // SPL token account: mint 0..32, owner 32..64.
        if (acc?.data.length !== 165) return null;
        return { holder: addressOf(acc.data.subarray(32, 64)), tokenAccount: top.address };
      } catch (e) {
        // Solana answers -32602 for a mint it does not know: not tokenized.
        if (isSolanaError(e, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)) return null;
        throw e;
      }
    },
  };
}

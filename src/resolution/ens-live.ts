import {
  type Address,
  createPublicClient,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  http,
  parseAbi,
  toHex,
} from "viem";
import { namehash, packetToBytes } from "viem/ens";
import { AppError } from "../domain/errors.js";
import type { DomainRecord } from "../domain/types.js";
import type { AddressPolicy } from "../net/address-guard.js";
import { type LiveAnswer, type LiveAnswerCache, memoryLiveCache } from "./ens-live-cache.js";
import { createGatewayRequest, type LookupChain } from "./ens-gateway-request.js";
import { mapEnsRecord } from "../providers/ens/ens-records.js";

/** ENSIP-10's extended resolver interface: `resolve(bytes name, bytes data)`. */
const EXTENDED_RESOLVER = "0x9061b923";

const RESOLVER_ABI = parseAbi([
  "function supportsInterface(bytes4 interfaceID) view returns (bool)",
  "function resolve(bytes name, bytes data) view returns (bytes)",
  "function addr(bytes32 node) view returns (address)",
  "function addr(bytes32 node, uint256 coinType) view returns (bytes)",
  "function text(bytes32 node, string key) view returns (string)",
  "function contenthash(bytes32 node) view returns (bytes)",
]);

/**
 * The records asked of a resolver: the canonical set of docs/records.md, as ENS native keys. ETH
 * through `addr(bytes32)` (what every ENS client reads), the other coin types we map through
 * `addr(bytes32,uint256)`, the text keys we map, and the contenthash.
 */
export const LIVE_RECORDS: readonly string[] = [
  "addr.60",
  "addr.0",
  "addr.2",
  "addr.3",
  "addr.501",
  "text.url",
  "text.name",
  "text.avatar",
  "text.email",
  "text.description",
  "text.com.twitter",
  "text.com.github",
  "text.com.discord",
  "text.org.telegram",
  "contenthash",
];

export interface EnsLiveOptions {
  /** The ETHEREUM JSON-RPC. */
  rpcUrl: string;
  /** Resolvers whose records the index holds (lower case): their names are never looked up live. */
  storageResolvers: ReadonlySet<string>;
  /** Which gateway addresses may be reached (loopback only for the embedded devnet). */
  policy: AddressPolicy;
  timeoutMs: number;
  cacheMs: number;
  clock?: () => number;
  /** Where answers are kept for `cacheMs` (default: in this process). */
  cache?: LiveAnswerCache;
  /** Ends what the cache holds open (a Redis connection). */
  close?: () => Promise<void>;
  /** Told of every lookup: its outcome and duration (metrics). */
  observe?: (outcome: "ok" | "cached" | "failed", ms: number) => void;
}

/**
 * ENS names as every ENS client resolves them when the index cannot answer: a name under a resolver
 * whose records the crawler does not index (an offchain resolver, any resolver not in
 * `storageResolvers`), or one that exists only under a wildcard ancestor (ENSIP-10). The lookup is
 * the clients' own: `resolve(dnsEncode(name), call)` on an extended resolver (the plain call
 * otherwise) through `eth_call`, with an `OffchainLookup` revert followed per EIP-3668 by viem's
 * CCIP-Read (sender check, callback), its gateway requests made here through the SSRF guard.
 * Answers are cached per name under the map's stamp of its resolver (ens-live-cache.ts). A lookup that cannot complete throws
 * OFFCHAIN_LOOKUP_FAILED: never an empty record set that a wallet could read as "no address".
 *
 * @example
 * const live = createEnsLive({ rpcUrl, storageResolvers: new Set([publicResolver]), policy, timeoutMs: 4000, cacheMs: 60000 });
 * const answer = await live.lookup("offchain.eth", resolverAddress);
 */
export interface EnsLive {
  /** False: the operator turned live lookups off (ENS_LIVE_LOOKUP=false); names are only classified. */
  readonly enabled: boolean;
  /** Whether the index holds this resolver's records (a storage resolver): no live lookup. */
  isStorageResolver(resolver: string): boolean;
  /** Whether the resolver is extended (ENSIP-10), asked once and kept. */
  isExtended(resolver: string): Promise<boolean>;
  /**
   * The name's records as `resolver` answers them. `mapStamp` is what the map says of the name's
   * resolver entry (the block it last changed at): a cached answer of another stamp is never
   * served, so a resolver change in the map drops the cached answer at once.
   */
  lookup(name: string, resolver: string, mapStamp?: string): Promise<LiveAnswer>;
  /** Ends the shared cache's connection, if any (the API process's close). */
  close(): Promise<void>;
}

export function createEnsLive(opts: EnsLiveOptions): EnsLive {
  const clock = opts.clock ?? Date.now;
  /** The lookups chained so far by each call (EIP-3668's bound), by its abort signal. */
  const chained = new WeakMap<AbortSignal, LookupChain>();

  const gatewayRequest = createGatewayRequest({ policy: opts.policy, timeoutMs: opts.timeoutMs, chained });

  const client = createPublicClient({
    transport: http(opts.rpcUrl, { timeout: opts.timeoutMs, retryCount: 0 }),
    ccipRead: { request: gatewayRequest },
  });

  const extended = new Map<string, Promise<boolean>>();
  function isExtended(resolver: string): Promise<boolean> {
    const key = resolver.toLowerCase();
    let p = extended.get(key);
    if (p === undefined) {
      p = client
        .readContract({
          address: key as Address,
          abi: RESOLVER_ABI,
          functionName: "supportsInterface",
          args: [EXTENDED_RESOLVER],
        })
        .catch(() => false);
      // A failed RPC is asked again next time; an answer (true or false) is kept.
      p.catch(() => extended.delete(key));
      extended.set(key, p);
    }
    return p;
  }

  /** One record: its native value, or "" when the resolver has none (or refuses the call). */
  async function record(
    name: string,
    resolver: Address,
    nativeKey: string,
    ext: boolean,
    block: bigint,
    gateways: string[],
    siblings: AbortController[],
  ): Promise<string> {
    const node = namehash(name);
    const inner = innerCall(node, nativeKey);
    const controller = new AbortController();
    siblings.push(controller);
    const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
    chained.set(controller.signal, { count: 0, gateways });
    try {
      const data = ext
        ? encodeFunctionData({
            abi: RESOLVER_ABI,
            functionName: "resolve",
            args: [toHex(packetToBytes(name)), inner.data],
          })
        : inner.data;
      let result: Hex | undefined;
      try {
        ({ data: result } = await client.call({
          to: resolver,
          data,
          blockNumber: block,
          requestOptions: { signal: controller.signal },
        }));
      } catch (e) {
        // A plain revert of the call (the resolver has no such record, or no such function) is
        // what ENS clients read as "no record"; anything else (the RPC, a gateway, the callback,
        // a timeout) fails the lookup.
        if (isPlainRevert(e)) return "";
        throw e;
      }
      if (result === undefined || result === "0x") return "";
      const payload = ext
        ? (decodeFunctionResult({ abi: RESOLVER_ABI, functionName: "resolve", data: result }) as Hex)
        : result;
      return inner.decode(payload);
    } finally {
      clearTimeout(timer);
    }
  }

  async function fetchAnswer(name: string, resolver: string): Promise<LiveAnswer> {
    const started = performance.now();
    try {
      const ext = await isExtended(resolver);
      const block = await client.getBlockNumber({ cacheTime: 0 });
      const gateways: string[] = [];
      // The first record that fails fails the lookup: the others' calls and gateway requests are
      // abandoned at once rather than left running against a failing gateway.
      const siblings: AbortController[] = [];
      const values = await Promise.all(
        LIVE_RECORDS.map((k) => record(name, resolver as Address, k, ext, block, gateways, siblings)),
      ).catch((e: unknown) => {
        for (const c of siblings) c.abort();
        throw e;
      });
      const records: DomainRecord[] = [];
      LIVE_RECORDS.forEach((nativeKey, i) => {
        for (const m of mapEnsRecord(nativeKey, values[i] ?? ""))
          records.push({ key: m.key, value: m.value, nativeKey, nativeValue: values[i] ?? "" });
      });
      opts.observe?.("ok", performance.now() - started);
      return {
        records,
        resolver,
        gateways: [...new Set(gateways)],
        block: Number(block),
        fetchedAt: clock(),
        ttlMs: opts.cacheMs,
      };
    } catch (e) {
      opts.observe?.("failed", performance.now() - started);
      throw new AppError("OFFCHAIN_LOOKUP_FAILED", undefined, { cause: e, retryable: true });
    }
  }

  const cache = opts.cache ?? memoryLiveCache(clock);
  /** Lookups in flight, by name and stamp: concurrent requests for a name share one. */
  const inFlight = new Map<string, Promise<LiveAnswer>>();

  async function cachedOrFetched(name: string, resolver: string, stamp: string): Promise<LiveAnswer> {
    const hit = opts.cacheMs > 0 ? await cache.get(name, stamp) : null;
    if (hit !== null) {
      opts.observe?.("cached", 0);
      return hit;
    }
    const answer = await fetchAnswer(name, resolver);
    // A failure is not kept (fetchAnswer threw): the next request asks again.
    if (opts.cacheMs > 0) await cache.set(name, stamp, answer);
    return answer;
  }

  return {
    enabled: true,
    isStorageResolver: (resolver) => opts.storageResolvers.has(resolver.toLowerCase()),
    isExtended,
    close: async () => {
      await opts.close?.();
    },
    lookup(name, resolver, mapStamp = "") {
      const r = resolver.toLowerCase();
      const stamp = `${r}|${mapStamp}`;
      const key = `${name}|${stamp}`;
      let p = inFlight.get(key);
      if (p === undefined) {
        p = cachedOrFetched(name, r, stamp);
        inFlight.set(key, p);
        const done = () => {
          if (inFlight.get(key) === p) inFlight.delete(key);
        };
        p.then(done, done);
      }
      return p;
    },
  };
}

/**
 * The operator's "off" (ENS_LIVE_LOOKUP=false): names under other resolvers are recognized, so
 * that they answer from the map tagged `offchain-not-resolved`, but nothing is ever called.
 */
export function mapOnlyEnsLive(storageResolvers: ReadonlySet<string>): EnsLive {
  return {
    enabled: false,
    isStorageResolver: (resolver) => storageResolvers.has(resolver.toLowerCase()),
    isExtended: async () => false,
    lookup: async () => {
      throw new AppError("INTERNAL_ERROR", "live ENS lookups are turned off");
    },
    close: async () => {},
  };
}

/** The calldata of one record's call and the decoding of its answer to the native value. */
function innerCall(node: Hex, nativeKey: string): { data: Hex; decode: (result: Hex) => string } {
  if (nativeKey === "addr.60")
    return {
      data: encodeFunctionData({ abi: RESOLVER_ABI, functionName: "addr", args: [node] }),
      decode: (r) => {
        const a = decodeFunctionResult({
          abi: RESOLVER_ABI,
          functionName: "addr",
          args: [node],
          data: r,
        }) as Hex;
        return /^0x0{40}$/i.test(a) ? "" : a.toLowerCase();
      },
    };
  if (nativeKey.startsWith("addr.")) {
    const coinType = BigInt(nativeKey.slice(5));
    return {
      data: encodeFunctionData({ abi: RESOLVER_ABI, functionName: "addr", args: [node, coinType] }),
      decode: (r) => {
        const b = decodeFunctionResult({
          abi: RESOLVER_ABI,
          functionName: "addr",
          args: [node, coinType],
          data: r,
        }) as Hex;
        return b === "0x" ? "" : b.toLowerCase();
      },
    };
  }
  if (nativeKey.startsWith("text.")) {
    const key = nativeKey.slice(5);
    return {
      data: encodeFunctionData({ abi: RESOLVER_ABI, functionName: "text", args: [node, key] }),
      decode: (r) => decodeFunctionResult({ abi: RESOLVER_ABI, functionName: "text", data: r }) as string,
    };
  }
  return {
    data: encodeFunctionData({ abi: RESOLVER_ABI, functionName: "contenthash", args: [node] }),
    decode: (r) => {
      const b = decodeFunctionResult({ abi: RESOLVER_ABI, functionName: "contenthash", data: r }) as Hex;
      return b === "0x" ? "" : b.toLowerCase();
    },
  };
}

/** A revert of the call itself (no OffchainLookup in it, no transport or gateway failure). */
function isPlainRevert(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; depth < 8 && cur !== null && typeof cur === "object"; depth++) {
    const err = cur as { name?: string; cause?: unknown };
    if (err.name === "OffchainLookupError" || err.name === "HttpRequestError" || err.name === "TimeoutError")
      return false;
    if (err.name === "AbortError") return false;
    cur = err.cause;
  }
  const name = (e as { name?: string }).name;
  return name === "CallExecutionError" && /revert/i.test(String((e as Error).message));
}

import type { Address, Hex } from "viem";
import { isHex } from "viem";
import type { AddressPolicy } from "../net/address-guard.js";
import { guardedRequest } from "../net/guarded-request.js";

/** EIP-3668: a client follows at most this many OffchainLookup reverts for one call. */
const MAX_LOOKUPS = 4;
/** A gateway's answer is read up to this many bytes; a longer one fails the lookup. */
export const GATEWAY_MAX_BYTES = 256 * 1024;
/**
 * Gateway requests in flight to one host at once, across names (a slow gateway holds no more):
 * one lookup's records at once (15, ens-live.ts LIVE_RECORDS) and one more. At 8 a lookup went
 * out in two waves: a cold lookup took 2.95 × 15 bare CCIP-Read calls at once (bench/ens-live).
 */
const PER_HOST = 16;

/** The OffchainLookup reverts one call followed so far, and the gateways that answered them. */
export interface LookupChain {
  count: number;
  gateways: string[];
}

/**
 * viem's CCIP-Read `request` (EIP-3668's gateway step) through the SSRF guard: each URL of the
 * revert in turn (the template's `{sender}` and `{data}`; GET with `{data}`, POST otherwise), an
 * answer only from a 2xx of at most GATEWAY_MAX_BYTES that is `{ "data": "0x…" }`, no redirect
 * followed, at most PER_HOST requests in flight per host (the others wait their turn within the
 * bound), and at most MAX_LOOKUPS reverts followed per call (`chained`, keyed by the call's signal).
 */
export function createGatewayRequest(opts: {
  policy: AddressPolicy;
  timeoutMs: number;
  chained: WeakMap<AbortSignal, LookupChain>;
}) {
  const { chained } = opts;
  const slots = hostSlots(PER_HOST);
  return async function gatewayRequest(p: {
    data: Hex;
    sender: Address;
    urls: readonly string[];
    requestOptions?: { signal?: AbortSignal | undefined } | undefined;
  }): Promise<Hex> {
    const signal = p.requestOptions?.signal;
    const chain = signal ? chained.get(signal) : undefined;
    if (chain) {
      chain.count++;
      if (chain.count > MAX_LOOKUPS)
        throw new Error(`more than ${MAX_LOOKUPS} OffchainLookup reverts in one call (EIP-3668)`);
    }
    let last = "no gateway URL";
    for (const template of p.urls) {
      const url = template.replace("{sender}", p.sender.toLowerCase()).replace("{data}", p.data);
      const method = template.includes("{data}") ? "GET" : "POST";
      let host = "?";
      try {
        host = new URL(url).host;
      } catch {
        last = `${template}: not a URL`;
        continue;
      }
      if (!(await slots.acquire(host, signal))) {
        last = `${host}: no turn before the time bound (${PER_HOST} requests in flight)`;
        continue;
      }
      try {
        const r = await guardedRequest(url, {
          policy: opts.policy,
          method,
          headers: method === "POST" ? { "content-type": "application/json" } : {},
          body: method === "POST" ? JSON.stringify({ data: p.data, sender: p.sender }) : undefined,
          timeoutMs: opts.timeoutMs,
          maxBytes: GATEWAY_MAX_BYTES,
          signal,
        });
        if (r.outcome !== "answered") {
          last = `${host}: ${r.error}`;
          continue;
        }
        if (r.truncated) {
          last = `${host}: answer over ${GATEWAY_MAX_BYTES} bytes`;
          continue;
        }
        const status = r.statusCode ?? 0;
        if (status < 200 || status > 299) {
          last = `${host}: HTTP ${status}${status >= 300 && status < 400 ? " (redirects are not followed)" : ""}`;
          continue;
        }
        const data = gatewayData(r.body.toString("utf8"), String(r.headers["content-type"] ?? ""));
        if (data === null) {
          last = `${host}: malformed answer (not { "data": "0x…" })`;
          continue;
        }
        chain?.gateways.push(template);
        return data;
      } finally {
        slots.release(host);
      }
    }
    throw new Error(`gateway lookup failed: ${last}`);
  };
}

/** A gateway's `data`: the JSON body's `data` field (or a bare hex body), when it is hex. */
function gatewayData(body: string, contentType: string): Hex | null {
  let data: unknown = body.trim();
  if (contentType.startsWith("application/json") || body.trimStart().startsWith("{")) {
    try {
      data = (JSON.parse(body) as { data?: unknown }).data;
    } catch {
      return null;
    }
  }
  return typeof data === "string" && isHex(data) ? data : null;
}

/**
 * At most `limit` requests in flight per gateway host: a request waits its turn (in order), and
 * gives up when its signal aborts (the lookup's time bound).
 */
function hostSlots(limit: number) {
  const busy = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  return {
    async acquire(host: string, signal: AbortSignal | undefined): Promise<boolean> {
      if ((busy.get(host) ?? 0) < limit) {
        busy.set(host, (busy.get(host) ?? 0) + 1);
        return true;
      }
      if (signal?.aborted) return false;
      return new Promise<boolean>((resolve) => {
        const queue = waiting.get(host) ?? [];
        waiting.set(host, queue);
        const onAbort = () => {
          const i = queue.indexOf(turn);
          if (i >= 0) queue.splice(i, 1);
          resolve(false);
        };
        // The slot is handed over by release: `busy` stays as it was.
        const turn = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(true);
        };
        queue.push(turn);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    release(host: string): void {
      const next = waiting.get(host)?.shift();
      if (next !== undefined) {
        next();
        return;
      }
      const n = (busy.get(host) ?? 1) - 1;
      if (n <= 0) busy.delete(host);
      else busy.set(host, n);
    },
  };
}

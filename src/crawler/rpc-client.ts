import { redactUrl } from "../config/redact.js";
import { postJson, type RpcReply } from "./rpc-transport.js";
import {
  classifyRpcError,
  deferEndpoint,
  endpointNotBefore,
  faultOf,
  parseRetryAfter,
  RPC_FAULTS,
  type RpcFault,
  rpcError,
  TOO_MANY,
} from "./rpc-faults.js";

export interface RpcClientOptions {
  url: string;
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Retries of retryable faults before giving up (the sync loop then backs off and goes on). */
  maxRetries?: number;
  /** First backoff delay; doubles each retry with jitter, capped at `maxBackoffMs`. */
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  /** Responses above this many bytes (512 MiB) fail with `response-too-large` so the caller shrinks its range. */
  maxResponseBytes?: number;
  /** Called on each retry, for logs and metrics. */
  onRetry?: (info: { method: string; fault: RpcFault; attempt: number; delayMs: number }) => void;
  /** Called once per HTTP request with its outcome. */
  onRequest?: (info: { method: string; outcome: "ok" | RpcFault; ms: number }) => void;
  /** Aborts requests in flight and retries in wait (shutdown). */
  signal?: AbortSignal;
}

export interface RpcCall {
  method: string;
  params?: unknown[];
}

export interface CallOptions {
  /** Faults thrown at once instead of retried (getLogs shrinks its range on these). */
  noRetry?: readonly RpcFault[];
  /** Treat a `null` result as the `null-result` fault (a block the node does not have yet). */
  nonNull?: boolean;
  timeoutMs?: number;
  /**
   * Turns the reply's raw bytes into the reply object, instead of JSON.parse on this thread (the
   * crawler's decode worker). Faults it throws count as the request's outcome.
   */
  parse?: (body: ArrayBuffer) => Promise<unknown>;
  /**
   * A lower limit than the client's `maxResponseBytes`, for this call only (a getLogs part of
   * several blocks): a reply above it fails with `part-too-large`, told apart from the node's refusal.
   */
  maxBytes?: number;
}

export interface RpcClient {
  readonly url: string;
  call<T = unknown>(method: string, params?: unknown[], options?: CallOptions): Promise<T>;
  /** One HTTP request carrying several calls; results in call order. Any failed call fails the batch. */
  batch<T = unknown>(calls: readonly RpcCall[], options?: CallOptions): Promise<T[]>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // The crawler's stop signal lives as long as the process: every listener added to it must be
    // removed again, or a long crawl accumulates one per retry.
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    if (signal?.aborted) done();
    else signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * A signal that aborts after `ms` or when `parent` aborts, whichever comes first; `release`
 * detaches it from the parent (AbortSignal.any keeps its sources' listeners alive on Node 20).
 */
function requestSignal(ms: number, parent?: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("request timed out", "TimeoutError")), ms);
  const onAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) controller.abort(parent.reason);
  else parent?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * A reply's body in one ArrayBuffer, copied once from the stream's chunks: into a buffer of the
 * announced length (`Content-Length`, 0 when absent), grown by doubling past it. Fetch's
 * `Response.arrayBuffer()` copies a body twice (its chunks into one array, then that array into a
 * new buffer): ~13 % of the crawler's writing thread during a backfill, whose eth_getLogs replies
 * are megabytes each (bench/HISTORY.md, "The reply's bytes copied once"). Past `limit` bytes the
 * rest is not read: returns the count read so far.
 */
async function readBytes(res: RpcReply, announced: number, limit: number): Promise<ArrayBuffer | number> {
  let buf = new Uint8Array(announced > 0 ? announced : 64 * 1024);
  let n = 0;
  for await (const value of res.chunks()) {
    const end = n + value.byteLength;
    if (end > limit) {
      res.cancel();
      return end;
    }
    if (end > buf.byteLength) {
      const grown = new Uint8Array(Math.min(limit, Math.max(end, buf.byteLength * 2)));
      grown.set(buf.subarray(0, n));
      buf = grown;
    }
    buf.set(value, n);
    n = end;
  }
  return n === buf.byteLength ? buf.buffer : buf.buffer.slice(0, n);
}

/**
 * A small JSON-RPC client (node:http, rpc-transport.ts), the one of the crawler and of the devnet tooling. Not
 * viem's transport: it has no 10 MiB body limit, returns raw JSON (decoding logs by hand is ~3x
 * faster than viem's ABI decoding, as measured here), sends JSON-RPC batches (what makes seeding
 * fast: ~2,000 tx/s batched against ~330 sequential), and classifies every fault so the crawler
 * can tell "retry later" from "ask for less".
 *
 * @example
 * const rpc = createRpcClient({ url: "http://127.0.0.1:8545", maxRetries: 0 });
 * const head = Number(await rpc.call<string>("eth_blockNumber"));
 */
export function createRpcClient(options: RpcClientOptions): RpcClient {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const maxRetries = options.maxRetries ?? 8;
  const base = options.baseBackoffMs ?? 250;
  const cap = options.maxBackoffMs ?? 15_000;
  const maxBytes = options.maxResponseBytes ?? 512 * 1024 * 1024;
  const safeUrl = redactUrl(options.url);
  let nextId = 1;

  async function post(
    body: unknown,
    method: string,
    ms: number,
    parse?: (body: ArrayBuffer) => Promise<unknown>,
    limit = maxBytes,
  ): Promise<unknown> {
    // A Retry-After in force on this endpoint holds every request back, this one too.
    for (let until = endpointNotBefore(options.url); until > 0; until = endpointNotBefore(options.url)) {
      await sleep(until - Date.now(), options.signal);
      if (options.signal?.aborted) throw rpcError(`${method}: stopped`, { fault: "rpc", method });
    }
    const started = Date.now();
    let outcome: "ok" | RpcFault = "ok";
    // Our own limit: the call's (a part's) when it is the lower one, else the client's.
    const overLimit: RpcFault = limit < maxBytes ? "part-too-large" : "response-too-large";
    // The timeout covers the body too: postJson resolves at the headers.
    const request = requestSignal(ms, options.signal);
    try {
      let res: RpcReply;
      try {
        res = await postJson(options.url, JSON.stringify(body), request.signal);
      } catch (e) {
        if (options.signal?.aborted) throw rpcError(`${method}: stopped`, { fault: "rpc", method }, e);
        const timedOut = (e as Error).name === "TimeoutError" || (e as Error).name === "AbortError";
        outcome = timedOut ? "timeout" : "network";
        throw rpcError(
          timedOut ? `${method} timed out after ${ms} ms (${safeUrl})` : `${method}: cannot reach ${safeUrl}`,
          { fault: outcome, method },
          e,
        );
      }
      if (res.status === 429) {
        outcome = "rate-limited";
        res.cancel();
        const retryAfter = parseRetryAfter(res.header("retry-after"));
        if (retryAfter !== undefined) deferEndpoint(options.url, retryAfter);
        throw rpcError(`${method}: rate limited by ${safeUrl}`, {
          fault: "rate-limited",
          method,
          httpStatus: 429,
          retryAfter,
        });
      }
      if (res.status >= 500 || (res.status >= 400 && res.status !== 400)) {
        outcome = res.status === 413 ? "response-too-large" : "server";
        const text = await res.text().catch(() => "");
        // Some gateways answer a too-large query with a 5xx and a JSON-RPC body saying so.
        if (TOO_MANY.test(text)) outcome = "too-many-results";
        const retryAfter = parseRetryAfter(res.header("retry-after"));
        if (retryAfter !== undefined) deferEndpoint(options.url, retryAfter);
        throw rpcError(`${method}: HTTP ${res.status} from ${safeUrl}`, {
          fault: outcome,
          method,
          httpStatus: res.status,
          retryAfter,
        });
      }
      const length = Number(res.header("content-length") ?? 0);
      if (length > limit) {
        outcome = overLimit;
        res.cancel();
        throw rpcError(`${method}: response of ${length} bytes`, { fault: outcome, method });
      }
      if (parse) {
        let bytes: ArrayBuffer | number;
        try {
          bytes = await readBytes(res, length, limit);
        } catch (e) {
          const timedOut = (e as Error).name === "TimeoutError" || (e as Error).name === "AbortError";
          outcome = timedOut ? "timeout" : "network";
          throw rpcError(`${method}: body cut off (${safeUrl})`, { fault: outcome, method }, e);
        }
        if (typeof bytes === "number") {
          outcome = overLimit;
          throw rpcError(`${method}: response of at least ${bytes} bytes`, { fault: outcome, method });
        }
        try {
          return await parse(bytes);
        } catch (e) {
          outcome = faultOf(e)?.fault ?? "server";
          throw e;
        }
      }
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        const timedOut = (e as Error).name === "TimeoutError" || (e as Error).name === "AbortError";
        outcome = timedOut ? "timeout" : "network";
        throw rpcError(`${method}: body cut off (${safeUrl})`, { fault: outcome, method }, e);
      }
      if (text.length > limit) {
        outcome = overLimit;
        throw rpcError(`${method}: response of ${text.length} bytes`, { fault: outcome, method });
      }
      try {
        return JSON.parse(text);
      } catch (e) {
        outcome = "server";
        throw rpcError(`${method}: malformed JSON from ${safeUrl}`, { fault: "server", method }, e);
      }
    } finally {
      request.release();
      options.onRequest?.({ method, outcome, ms: Date.now() - started });
    }
  }

  function unwrap(method: string, reply: unknown, callOptions: CallOptions): unknown {
    const r = reply as { result?: unknown; error?: { code?: number; message?: string } } | null;
    if (!r || typeof r !== "object") throw rpcError(`${method}: empty reply`, { fault: "server", method });
    if (r.error) {
      const fault = classifyRpcError(r.error);
      throw rpcError(`${method}: ${String(r.error.message ?? "error").slice(0, 300)}`, {
        fault,
        method,
        rpcCode: r.error.code,
      });
    }
    if (callOptions.nonNull && (r.result === null || r.result === undefined))
      throw rpcError(`${method}: null result`, { fault: "null-result", method });
    return r.result;
  }

  async function withRetries<T>(
    method: string,
    callOptions: CallOptions,
    attempt: () => Promise<T>,
  ): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (e) {
        const f = faultOf(e);
        if (
          !f ||
          !RPC_FAULTS[f.fault].retryable ||
          callOptions.noRetry?.includes(f.fault) ||
          i >= maxRetries ||
          options.signal?.aborted
        )
          throw e;
        const backoff = Math.min(cap, base * 2 ** i) * (0.5 + Math.random() / 2);
        // With a Retry-After the wait is the endpoint's (post() awaits it before sending).
        const delayMs =
          f.retryAfter !== undefined ? Math.max(0, endpointNotBefore(options.url) - Date.now()) : backoff;
        options.onRetry?.({ method, fault: f.fault, attempt: i + 1, delayMs });
        if (f.retryAfter === undefined) await sleep(delayMs, options.signal);
      }
    }
  }

  return {
    url: options.url,
    call<T>(method: string, params: unknown[] = [], callOptions: CallOptions = {}): Promise<T> {
      return withRetries(method, callOptions, async () => {
        const reply = await post(
          { jsonrpc: "2.0", id: nextId++, method, params },
          method,
          callOptions.timeoutMs ?? timeoutMs,
          callOptions.parse,
          Math.min(maxBytes, callOptions.maxBytes ?? maxBytes),
        );
        return unwrap(method, reply, callOptions) as T;
      });
    },
    batch<T>(calls: readonly RpcCall[], callOptions: CallOptions = {}): Promise<T[]> {
      if (calls.length === 0) return Promise.resolve([]);
      const method = `batch(${calls[0].method}×${calls.length})`;
      return withRetries(method, callOptions, async () => {
        const first = nextId;
        nextId += calls.length;
        const body = calls.map((c, i) => ({
          jsonrpc: "2.0",
          id: first + i,
          method: c.method,
          params: c.params ?? [],
        }));
        const reply = await post(body, method, callOptions.timeoutMs ?? timeoutMs);
        if (!Array.isArray(reply)) {
          // A server without batch support answers one error object for the whole array.
          unwrap(method, reply, callOptions);
          throw rpcError(`${method}: batch answered with a single reply`, { fault: "server", method });
        }
        const byId = new Map<number, unknown>();
        for (const r of reply) byId.set(Number((r as { id: unknown }).id), r);
        return calls.map((c, i) => unwrap(c.method, byId.get(first + i), callOptions) as T);
      });
    },
  };
}

import createClient, { type Client, type Middleware } from "openapi-fetch";
import { type ChangesOptions, changeFeed } from "./changes.js";
import { OmninameError, parseRetryAfter } from "./errors.js";
import type { operations, paths } from "./schema.js";

export type { ChangeFeedEvent, ChangesOptions } from "./changes.js";
export { OmninameError, type OmninameErrorCode, type ClientErrorCode, parseRetryAfter } from "./errors.js";
export type { paths, components } from "./schema.js";

type Query<P extends keyof paths> = paths[P]["get"] extends { parameters: { query?: infer Q } } ? Q : never;
// Conditional, not indexed: paths that have no GET (the batch calls) make `get` never.
type Data<P extends keyof paths> = paths[P]["get"] extends {
  responses: { 200: { content: { "application/json": { data: infer D } } } };
}
  ? D
  : never;

/** A domain record as resolve answers it. */
export type DomainRecord = Data<"/svc/api/v1/resolve">;
export type ResolveOptions = Omit<Query<"/svc/api/v1/resolve">, "domain" | "fullQualifiedDomain">;
export type ReverseResolveOptions = Omit<Query<"/svc/api/v1/reverse-resolve">, "walletAddress">;

type BatchOp = "batchResolve" | "batchDeepResolve" | "batchReverseResolve";
type BatchBody<O extends BatchOp> = NonNullable<operations[O]["requestBody"]>["content"]["application/json"];
/** One answer of a batch call, in input order: `{ input, result: true, data }` or `{ input, result: false, error }`. */
export type BatchItem<O extends BatchOp> =
  operations[O]["responses"][200]["content"]["application/json"]["data"][number];
/** The batch's filters (body) and its provenance / time-travel options (URL), as a single request's. */
export type BatchOptions = Omit<BatchBody<"batchResolve">, "domains"> &
  NonNullable<operations["batchResolve"]["parameters"]["query"]>;

/** The server's limit of inputs per batch call; the client's *Many methods split longer lists. */
export const MAX_BATCH_INPUTS = 1_000;

export interface OmninameClientOptions {
  /** Where omniname listens, e.g. `https://resolver.example.com` (no path). */
  baseUrl: string;
  /** The project's API key (header `api-key`). */
  apiKey: string;
  /** Retries of a retryable answer (429, 503, a network failure). Default 2; 0 turns them off. */
  retries?: number;
  /** The longest wait before a retry, whatever `Retry-After` says; longer → the error is thrown. Default 30 s. */
  maxRetryDelayMs?: number;
  /** A fetch implementation (tests, proxies). Default: the global fetch. */
  fetch?: typeof fetch;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The typed client of omniname's resolver API. Methods return the `data` of the answer and throw
 * `OmninameError` (typed `code`) otherwise; `api` is the underlying openapi-fetch client for
 * anything else the OpenAPI document describes.
 *
 * @example
 * const omniname = createOmninameClient({ baseUrl: "http://127.0.0.1:3000", apiKey: process.env.OMNINAME_KEY! });
 * const record = await omniname.resolve("alice.wallet");
 * console.log(record.owner, record.records["token.ETH.0"]);
 */
export function createOmninameClient(options: OmninameClientOptions) {
  const retries = Math.max(0, Math.floor(options.retries ?? 2));
  const maxDelay = options.maxRetryDelayMs ?? 30_000;
  const baseFetch = options.fetch ?? globalThis.fetch;
  // Bounded retries that honour Retry-After: a request is sent again only when the server said
  // when (or after a short backoff on a network failure), never past maxRetryDelayMs.
  const retryingFetch: typeof fetch = async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      const request = input instanceof Request ? input.clone() : input;
      let res: Response;
      try {
        res = await baseFetch(request, init);
      } catch (cause) {
        if (attempt >= retries) throw new OmninameError("NETWORK_ERROR", String(cause), 0, { cause });
        await sleep(Math.min(maxDelay, 250 * 2 ** attempt));
        continue;
      }
      if ((res.status !== 429 && res.status !== 503) || attempt >= retries) return res;
      const wait = parseRetryAfter(res.headers.get("retry-after")) ?? 1000 * 2 ** attempt;
      if (wait > maxDelay) return res;
      await res.body?.cancel();
      await sleep(wait);
    }
  };
  const api: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { "api-key": options.apiKey },
    fetch: retryingFetch,
  });
  const errors: Middleware = {
    async onResponse({ response }) {
      if (response.ok) return undefined;
      throw await errorOf(response);
    },
  };
  api.use(errors);

  return {
    api,
    /** The highest-scored domain of the name under the project's settings. */
    async resolve(domain: string, opts: ResolveOptions = {}): Promise<DomainRecord> {
      const { data } = await api.GET("/svc/api/v1/resolve", { params: { query: { ...opts, domain } } });
      return (data as { data: DomainRecord }).data;
    },
    /** Every domain of the name, best first (empty when none). */
    async deepResolve(domain: string, opts: ResolveOptions = {}): Promise<Data<"/svc/api/v1/deep-resolve">> {
      const { data } = await api.GET("/svc/api/v1/deep-resolve", { params: { query: { ...opts, domain } } });
      return (data as { data: Data<"/svc/api/v1/deep-resolve"> }).data;
    },
    /** The domains whose reverse record names the address (empty when none). */
    async reverseResolve(
      walletAddress: string,
      opts: ReverseResolveOptions = {},
    ): Promise<Data<"/svc/api/v1/reverse-resolve">> {
      const { data } = await api.GET("/svc/api/v1/reverse-resolve", {
        params: { query: { ...opts, walletAddress } },
      });
      return (data as { data: Data<"/svc/api/v1/reverse-resolve"> }).data;
    },
    /**
     * The change feed as an async iterator: `for await (const e of omniname.changes({ tlds: "wallet" }))`.
     * Resumes with its last id when the stream drops; ends when `signal` aborts.
     */
    changes(opts: ChangesOptions = {}) {
      return changeFeed(options.baseUrl.replace(/\/+$/, ""), options.apiKey, baseFetch, opts);
    },
    /**
     * resolve for any number of names: batch calls of up to 1,000, one after the other, answers in
     * input order. A bad name or a name without a match is its item's `error`, not a throw.
     */
    resolveMany(domains: readonly string[], opts: BatchOptions = {}): Promise<BatchItem<"batchResolve">[]> {
      return inBatches(domains, (chunk) => post("/svc/api/v1/batch/resolve", { ...opts, domains: chunk }));
    },
    /** deep-resolve for any number of names (as resolveMany). */
    deepResolveMany(
      domains: readonly string[],
      opts: BatchOptions = {},
    ): Promise<BatchItem<"batchDeepResolve">[]> {
      return inBatches(domains, (chunk) =>
        post("/svc/api/v1/batch/deep-resolve", { ...opts, domains: chunk }),
      );
    },
    /** reverse-resolve for any number of addresses (as resolveMany). */
    reverseResolveMany(
      walletAddresses: readonly string[],
      opts: BatchOptions = {},
    ): Promise<BatchItem<"batchReverseResolve">[]> {
      return inBatches(walletAddresses, (chunk) =>
        post("/svc/api/v1/batch/reverse-resolve", { ...opts, walletAddresses: chunk }),
      );
    },
  };

  async function post<T>(
    path:
      | "/svc/api/v1/batch/resolve"
      | "/svc/api/v1/batch/deep-resolve"
      | "/svc/api/v1/batch/reverse-resolve",
    body: Record<string, unknown>,
  ): Promise<T[]> {
    // The three bodies differ only in the list's field; the server validates each. provenance,
    // at and atBlock go on the URL.
    const { provenance, at, atBlock, ...rest } = body as BatchOptions & Record<string, unknown>;
    const { data } = await api.POST(path, {
      params: { query: { provenance, at, atBlock } },
      body: rest as never,
    });
    return (data as unknown as { data: T[] }).data;
  }
}

async function inBatches<T>(
  inputs: readonly string[],
  call: (chunk: string[]) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < inputs.length; i += MAX_BATCH_INPUTS)
    out.push(...(await call(inputs.slice(i, i + MAX_BATCH_INPUTS))));
  return out;
}

export type OmninameClient = ReturnType<typeof createOmninameClient>;

async function errorOf(response: Response): Promise<OmninameError> {
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (body.result === false && typeof body.error?.code === "string") {
      return new OmninameError(
        body.error.code as OmninameError["code"],
        String(body.error.message ?? body.error.code),
        response.status,
        { retryAfterMs },
      );
    }
  } catch {
    // not JSON: below
  }
  return new OmninameError(
    "UNEXPECTED_RESPONSE",
    `HTTP ${response.status}: ${text.slice(0, 200)}`,
    response.status,
    {
      retryAfterMs,
    },
  );
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRpcClient } from "./rpc-client.js";
import {
  classifyRpcError,
  deferEndpoint,
  endpointNotBefore,
  faultOf,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
} from "./rpc-faults.js";

type Handler = (body: unknown, res: ServerResponse) => void;

describe("rpc client", () => {
  let server: Server;
  let url = "";
  const script: Handler[] = [];
  let calls = 0;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = "";
      req.on("data", (c) => {
        raw += c;
      });
      req.on("end", () => {
        calls++;
        const handler = script.shift();
        if (handler) handler(JSON.parse(raw), res);
        else
          res.end(
            JSON.stringify({ jsonrpc: "2.0", id: (JSON.parse(raw) as { id: number }).id, result: "0x10" }),
          );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const reply =
    (result: unknown): Handler =>
    (body, res) =>
      res.end(JSON.stringify({ jsonrpc: "2.0", id: (body as { id: number }).id, result }));

  it("retries 429 (honouring Retry-After), 5xx and null results, then returns the result", async () => {
    calls = 0;
    script.push(
      (_b, res) => {
        res.writeHead(429, { "retry-after": "0" });
        res.end();
      },
      (_b, res) => {
        res.writeHead(503);
        res.end("busy");
      },
      reply(null),
      reply("0x2a"),
    );
    const retries: string[] = [];
    const rpc = createRpcClient({ url, baseBackoffMs: 1, onRetry: (r) => retries.push(r.fault) });
    expect(await rpc.call<string>("eth_blockNumber", [], { nonNull: true })).toBe("0x2a");
    expect(retries).toEqual(["rate-limited", "server", "null-result"]);
    expect(calls).toBe(4);
  });

  it("throws a too-many-results fault at once when asked not to retry it", async () => {
    script.push((b, res) =>
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: (b as { id: number }).id,
          error: { code: -32005, message: "query returned more than 10000 results" },
        }),
      ),
    );
    const rpc = createRpcClient({ url, baseBackoffMs: 1 });
    const e = await rpc.call("eth_getLogs", [{}], { noRetry: ["too-many-results"] }).catch((x) => x);
    expect(faultOf(e)?.fault).toBe("too-many-results");
    expect((e as { retryable: boolean }).retryable).toBe(true);
  });

  const logs = Array.from({ length: 200 }, (_, i) => ({
    logIndex: `0x${i.toString(16)}`,
    data: "0x".padEnd(66, "a"),
  }));

  it("fails a reply above the call's own byte limit as part-too-large, below the client's", async () => {
    script.push(reply(logs), reply(logs));
    const rpc = createRpcClient({ url, baseBackoffMs: 1 });
    const options = { noRetry: ["part-too-large"] as const, maxBytes: 4_096 };
    const e = await rpc.call("eth_getLogs", [{}], options).catch((x) => x);
    expect(faultOf(e)?.fault).toBe("part-too-large");
    // Without the call's limit the same reply is read.
    expect(await rpc.call("eth_getLogs", [{}])).toHaveLength(200);
  });

  it.each([
    ["a reply above the client's byte limit", reply(logs), { maxBytes: 1_000_000 }],
    [
      "the node's HTTP 413",
      ((_b, res) => {
        res.writeHead(413);
        res.end("too large");
      }) as Handler,
      {},
    ],
  ])("fails %s as response-too-large", async (_, handler, callLimit) => {
    script.push(handler);
    const outcomes: string[] = [];
    const rpc = createRpcClient({
      url,
      maxResponseBytes: 4_096,
      onRequest: (r) => outcomes.push(r.outcome),
    });
    const e = await rpc
      .call("eth_getLogs", [{}], { noRetry: ["response-too-large"], ...callLimit })
      .catch((x) => x);
    expect(faultOf(e)?.fault).toBe("response-too-large");
    expect(outcomes).toEqual(["response-too-large"]);
  });

  /** The last reply `sized` sent. */
  let sent = Buffer.alloc(0);
  /** A reply of `size` bytes (a JSON string result), sent in chunks, with or without its length. */
  function sized(size: number, { announce, chunk }: { announce: boolean; chunk: number }): Handler {
    return (b, res) => {
      const head = `{"jsonrpc":"2.0","id":${(b as { id: number }).id},"result":"`;
      const body = Buffer.from(`${head}${"ab".repeat(size).slice(0, size - head.length - 2)}"}`);
      sent = body;
      res.writeHead(200, announce ? { "content-length": body.length } : {});
      for (let i = 0; i < body.length; i += chunk) res.write(body.subarray(i, i + chunk));
      res.end();
    };
  }

  it.each([
    ["announced, in one chunk", 3_000, { announce: true, chunk: 1_000_000 }],
    ["announced, in many chunks", 300_000, { announce: true, chunk: 7_000 }],
    ["unannounced, smaller than the first buffer", 3_000, { announce: false, chunk: 1_000 }],
    ["unannounced, grown past the first buffer", 700_000, { announce: false, chunk: 50_000 }],
  ])("hands a reply's exact bytes to its parser (%s)", async (_, size, how) => {
    script.push(sized(size, how));
    let seen: ArrayBuffer | null = null;
    const rpc = createRpcClient({ url });
    const result = await rpc.call<string>("eth_getLogs", [{}], {
      parse: async (body) => {
        seen = body;
        return JSON.parse(Buffer.from(body).toString("utf8"));
      },
    });
    expect(Buffer.from(seen as unknown as ArrayBuffer).equals(sent)).toBe(true);
    expect(sent.length).toBe(size);
    expect(result).toMatch(/^(ab)+a?$/);
  });

  it.each([
    ["announced", { announce: true, chunk: 10_000 }],
    ["unannounced, found while reading", { announce: false, chunk: 10_000 }],
  ])("fails a parsed reply above the call's byte limit as part-too-large (%s)", async (_, how) => {
    script.push(sized(200_000, how));
    let parsed = 0;
    const rpc = createRpcClient({ url });
    const e = await rpc
      .call("eth_getLogs", [{}], {
        noRetry: ["part-too-large"],
        maxBytes: 50_000,
        parse: async () => {
          parsed++;
          return {};
        },
      })
      .catch((x) => x);
    expect(faultOf(e)?.fault).toBe("part-too-large");
    expect(parsed).toBe(0);
  });

  it("fails a parsed reply cut off halfway as a network fault", async () => {
    script.push((_b, res) => {
      res.writeHead(200, { "content-length": 100_000 });
      res.write(Buffer.alloc(30_000, 0x20));
      setTimeout(() => res.destroy(), 20);
    });
    const rpc = createRpcClient({ url, maxRetries: 0 });
    const e = await rpc.call("eth_getLogs", [{}], { parse: async () => ({ result: [] }) }).catch((x) => x);
    expect(faultOf(e)?.fault).toBe("network");
    expect(String((e as Error).message)).toMatch(/body cut off/);
  });

  it("times a hung request out", async () => {
    script.push(() => {}); // never answers
    const rpc = createRpcClient({ url, timeoutMs: 100 });
    const started = Date.now();
    const e = await rpc.call("eth_getLogs", [{}], { noRetry: ["timeout"] }).catch((x) => x);
    expect(faultOf(e)?.fault).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("gives up after maxRetries with a retryable error", async () => {
    for (let i = 0; i < 3; i++)
      script.push((_b, res) => {
        res.writeHead(502);
        res.end();
      });
    const rpc = createRpcClient({ url, maxRetries: 2, baseBackoffMs: 1 });
    const e = (await rpc.call("eth_chainId", []).catch((x) => x)) as { retryable: boolean };
    expect(faultOf(e)?.fault).toBe("server");
    expect(e.retryable).toBe(true);
  });

  it("does not retry a final JSON-RPC error", async () => {
    calls = 0;
    script.push((b, res) =>
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: (b as { id: number }).id,
          error: { code: -32601, message: "method not found" },
        }),
      ),
    );
    const rpc = createRpcClient({ url, baseBackoffMs: 1 });
    const e = (await rpc.call("eth_nope", []).catch((x) => x)) as { retryable: boolean };
    expect(faultOf(e)?.fault).toBe("rpc");
    expect(e.retryable).toBe(false);
    expect(calls).toBe(1);
  });

  it("stops waiting and retrying once its signal aborts (shutdown)", async () => {
    for (let i = 0; i < 3; i++)
      script.push((_b, res) => {
        res.writeHead(503);
        res.end();
      });
    const controller = new AbortController();
    const rpc = createRpcClient({ url, baseBackoffMs: 10_000, signal: controller.signal });
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    const e = await rpc.call("eth_blockNumber", []).catch((x) => x);
    expect(faultOf(e)).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(2_000);
    script.length = 0;
  });

  it("holds every call on the endpoint back until a 429's Retry-After, not only the one told", async () => {
    // Each test's own URL (a path on the same server): the not-before time is per endpoint.
    const endpoint = `${url}/retry-after-shared`;
    const arrivals: number[] = [];
    let refusedAt = 0;
    script.push(
      (_b, res) => {
        refusedAt = Date.now();
        res.writeHead(429, { "retry-after": "1" });
        res.end();
      },
      (b, res) => {
        arrivals.push(Date.now());
        reply("0x1")(b, res);
      },
      (b, res) => {
        arrivals.push(Date.now());
        reply("0x2")(b, res);
      },
    );
    // A second client on the same URL (two sources on one node) is held back too.
    const other = createRpcClient({ url: endpoint, baseBackoffMs: 1 });
    let second: Promise<string> | null = null;
    const rpc = createRpcClient({
      url: endpoint,
      baseBackoffMs: 1,
      // A call started once the 429 is in: it must wait for the Retry-After like the first.
      onRetry: () => {
        second ??= other.call<string>("eth_blockNumber");
      },
    });
    const first = await rpc.call<string>("eth_blockNumber");
    const results = [first, await second];
    expect(results.sort()).toEqual(["0x1", "0x2"]);
    expect(arrivals).toHaveLength(2);
    for (const t of arrivals) expect(t).toBeGreaterThanOrEqual(refusedAt + 1_000);
  });

  it("honours a Retry-After given as an HTTP date, and a 503's", async () => {
    const endpoint = `${url}/retry-after-date`;
    let refusedAt = 0;
    let arrived = 0;
    script.push(
      (_b, res) => {
        refusedAt = Date.now();
        // An HTTP date has whole seconds: two seconds ahead is at least one second of wait.
        res.writeHead(503, { "retry-after": new Date(refusedAt + 2_000).toUTCString() });
        res.end();
      },
      (b, res) => {
        arrived = Date.now();
        reply("0x3")(b, res);
      },
    );
    const rpc = createRpcClient({ url: endpoint, baseBackoffMs: 1 });
    expect(await rpc.call<string>("eth_blockNumber")).toBe("0x3");
    const due = Math.floor((refusedAt + 2_000) / 1000) * 1000;
    expect(arrived).toBeGreaterThanOrEqual(due);
  });

  it("lets the stop signal cut a long Retry-After short", async () => {
    const endpoint = `${url}/retry-after-stop`;
    script.push((_b, res) => {
      res.writeHead(429, { "retry-after": "300" });
      res.end();
    });
    const controller = new AbortController();
    const rpc = createRpcClient({ url: endpoint, signal: controller.signal });
    const e = rpc.call("eth_blockNumber").catch((x) => x);
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    expect(faultOf(await e)).not.toBeNull();
    // A call made after the stop does not wait out the five minutes either.
    const late = await rpc.call("eth_blockNumber").catch((x) => x);
    expect(faultOf(late)?.method).toBe("eth_blockNumber");
    expect(endpointNotBefore(endpoint)).toBeGreaterThan(Date.now() + 200_000);
  });

  it("matches batch replies to calls by id, whatever their order", async () => {
    script.push((b, res) => {
      const calls = b as Array<{ id: number; params: [string] }>;
      res.end(
        JSON.stringify([...calls].reverse().map((c) => ({ jsonrpc: "2.0", id: c.id, result: c.params[0] }))),
      );
    });
    const rpc = createRpcClient({ url });
    const out = await rpc.batch<string>([
      { method: "echo", params: ["a"] },
      { method: "echo", params: ["b"] },
      { method: "echo", params: ["c"] },
    ]);
    expect(out).toEqual(["a", "b", "c"]);
  });
});

describe("classifyRpcError", () => {
  it.each([
    [{ code: -32005, message: "query returned more than 10000 results" }, "too-many-results"],
    [
      {
        code: -32000,
        message: "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range",
      },
      "too-many-results",
    ],
    [{ code: -32602, message: "block range is too wide" }, "too-many-results"],
    [{ code: -32000, message: "exceed maximum block range: 5000" }, "too-many-results"],
    [{ code: -32000, message: "header not found" }, "server"],
    [{ code: 429, message: "Too Many Requests" }, "rate-limited"],
    [{ code: -32601, message: "the method eth_foo does not exist" }, "rpc"],
  ])("%j → %s", (error, fault) => {
    expect(classifyRpcError(error)).toBe(fault);
  });
});

describe("parseRetryAfter", () => {
  it.each([
    ["3", 3],
    ["0", 0],
    [null, undefined],
    ["soon", undefined],
  ])("%s → %s", (value, seconds) => {
    expect(parseRetryAfter(value)).toBe(seconds);
  });

  it("reads an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1);
    expect(parseRetryAfter(new Date(now + 5_000).toUTCString(), now)).toBe(5);
  });
});

describe("the endpoint's not-before time", () => {
  const now = Date.UTC(2026, 0, 1);

  it("is the latest Retry-After, capped at ten minutes", () => {
    const u = "http://not-before.test/a";
    expect(endpointNotBefore(u, now)).toBe(0);
    expect(deferEndpoint(u, 30, now)).toBe(now + 30_000);
    // A shorter Retry-After does not shorten the one in force.
    expect(deferEndpoint(u, 5, now)).toBe(now + 30_000);
    expect(deferEndpoint(u, 120, now)).toBe(now + 120_000);
    expect(endpointNotBefore(u, now + 60_000)).toBe(now + 120_000);
    expect(deferEndpoint(u, 86_400, now)).toBe(now + MAX_RETRY_AFTER_MS);
    expect(MAX_RETRY_AFTER_MS).toBe(600_000);
    // Over once passed, and per URL.
    expect(endpointNotBefore(u, now + MAX_RETRY_AFTER_MS)).toBe(0);
    expect(endpointNotBefore("http://not-before.test/b", now)).toBe(0);
  });

  it("ignores a zero or negative Retry-After", () => {
    const u = "http://not-before.test/c";
    expect(deferEndpoint(u, 0, now)).toBe(now);
    expect(deferEndpoint(u, -5, now)).toBe(now);
    expect(endpointNotBefore(u, now)).toBe(0);
  });
});

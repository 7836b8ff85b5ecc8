import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyRpcError, createRpcClient, faultOf, parseRetryAfter } from "./rpc-client.js";

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

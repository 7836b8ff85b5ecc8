import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedRequest } from "./guarded-request.js";

// A server on 127.0.0.1 only; the refusals below are decided before any socket opens.
describe("guardedRequest", () => {
  let server: Server;
  let base = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" }).end();
      } else if (req.url === "/big") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(Buffer.alloc(64 * 1024, 0x61));
      } else if (req.url === "/hang") {
        // never answers: the client's time bound ends it
      } else {
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () =>
          res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ method: req.method, body })),
        );
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const loopback = { allowLoopback: true };
  const base4 = { policy: loopback, timeoutMs: 2_000, maxBytes: 1024 };

  it("answers a GET and a POST with their bodies", async () => {
    const get = await guardedRequest(`${base}/x`, { ...base4, method: "GET" });
    expect(get).toMatchObject({ outcome: "answered", statusCode: 200, truncated: false });
    expect(JSON.parse(get.body.toString())).toEqual({ method: "GET", body: "" });
    const post = await guardedRequest(`${base}/x`, { ...base4, method: "POST", body: '{"a":1}' });
    expect(JSON.parse(post.body.toString())).toEqual({ method: "POST", body: '{"a":1}' });
  });

  it("does not follow a redirect: the 3xx is the answer", async () => {
    expect(await guardedRequest(`${base}/redirect`, { ...base4, method: "GET" })).toMatchObject({
      outcome: "answered",
      statusCode: 302,
    });
  });

  it("stops reading past maxBytes and says so", async () => {
    const r = await guardedRequest(`${base}/big`, { ...base4, method: "GET" });
    expect(r.truncated).toBe(true);
    expect(r.body.length).toBe(1024);
  });

  it("ends a request that takes longer than its bound", async () => {
    const r = await guardedRequest(`${base}/hang`, { ...base4, timeoutMs: 200, method: "GET" });
    expect(r).toMatchObject({ outcome: "failed", error: "timed out after 200 ms" });
  });

  it.each([
    ["loopback without the policy", "http://127.0.0.1:9/x", { allowLoopback: false }, "must be https://"],
    [
      "https to loopback without the policy",
      "https://127.0.0.1:9/x",
      { allowLoopback: false },
      "127.0.0.1 is a loopback address",
    ],
    ["a private literal", "https://10.1.2.3/x", loopback, "10.1.2.3 is a private address"],
    [
      "the metadata address",
      "https://169.254.169.254/latest",
      loopback,
      "169.254.169.254 is a linkLocal address",
    ],
    ["an IPv4-mapped private address", "https://[::ffff:192.168.1.1]/x", loopback, "is a private address"],
    ["0.0.0.0", "https://0.0.0.0/x", loopback, "0.0.0.0 is a unspecified address"],
    [
      "http to a non-loopback literal",
      "http://93.184.216.34/x",
      loopback,
      "http:// only to a loopback address",
    ],
    [
      "a user name in the URL",
      "https://user:pw@example.com/x",
      loopback,
      "must not carry a user name or password",
    ],
  ])("refuses %s before connecting", async (_label, url, policy, reason) => {
    const r = await guardedRequest(url, { ...base4, policy, method: "GET" });
    expect(r.outcome).toBe("refused");
    expect(r.error).toContain(reason);
  });
});

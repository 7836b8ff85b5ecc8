import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "./rpc-transport.js";

describe("postJson", () => {
  let server: Server;
  let base = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        if (req.url === "/moved") {
          res.writeHead(307, { location: "/gzip" }).end();
          return;
        }
        if (req.url === "/gzip" && /gzip/.test(String(req.headers["accept-encoding"]))) {
          const zipped = gzipSync(JSON.stringify({ echo: JSON.parse(body), url: req.url }));
          res.writeHead(200, { "content-encoding": "gzip", "content-length": zipped.length }).end(zipped);
          return;
        }
        res.writeHead(200).end(JSON.stringify({ echo: JSON.parse(body), url: req.url }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("posts the JSON, decompresses a gzipped reply and follows a redirect with the POST", async () => {
    const reply = await postJson(`${base}/moved`, '{"id":1}', new AbortController().signal);
    expect(reply.status).toBe(200);
    expect(reply.header("Content-Encoding")).toBe("gzip");
    expect(JSON.parse(await reply.text())).toEqual({ echo: { id: 1 }, url: "/gzip" });
  });

  it("rejects with the signal's reason when it aborts before the reply", async () => {
    const controller = new AbortController();
    controller.abort(new DOMException("request timed out", "TimeoutError"));
    await expect(postJson(`${base}/plain`, "{}", controller.signal)).rejects.toMatchObject({
      name: "TimeoutError",
    });
  });
});

import { request as httpRequest } from "node:http";
import type { ChangeEventWrite } from "../../../src/domain/change-events.js";

/* The change feed tests' fixtures: events written straight to the log, and a plain GET. */

const TOKEN = `0x${"ab".repeat(32)}`;
export const event = (i: number, pad = 0): ChangeEventWrite => ({
  type: "domain.created",
  createdAt: Date.now(),
  sourceId: "fns-polygon",
  network: "POLYGON",
  provider: "NAMESPACE_A",
  tokenId: TOKEN,
  name: `n${i}.limits`,
  tld: "limits",
  blockNumber: i,
  blockHash: TOKEN,
  txHash: TOKEN,
  blockTime: null,
  retracts: null,
  projectId: null,
  payload: {
    state: {
      owner: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
      expiresAt: null,
      records: [{ key: "pad", value: "x".repeat(pad) }],
    },
  },
});

/** Status and JSON body of a plain GET (not an SSE client): the refusals come before the stream. */
export function get(base: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
        if ((res.headers["content-type"] ?? "").startsWith("text/event-stream")) req.destroy();
      });
      res.on("close", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

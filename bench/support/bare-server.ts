import { readFileSync } from "node:fs";
import Fastify from "fastify";
import { boundPort, serveAsChild } from "./child-server.js";

// The baselines: bare Fastify routes answering a fixed body of the same size as a resolve answer
// (no auth, no store, no schema). argv: <json file> [<headers file>]. Sends { port } over IPC.
// - /bare: the body alone, with Fastify's own headers;
// - /bare-headers: the same body with the header fields of the sampled answer (security headers,
//   rate-limit fields, cache control: what a v1 answer sends), so that the whole response, not
//   the body alone, is the same bytes. Node validates and writes each field: about a third of a
//   small answer's CPU on this path.
const body = JSON.parse(readFileSync(process.argv[2], "utf8")) as unknown;
const headers = process.argv[3]
  ? (JSON.parse(readFileSync(process.argv[3], "utf8")) as Record<string, string>)
  : {};
const app = Fastify({ logger: false });
app.get("/bare", async () => body);
app.get("/bare-headers", async (_request, reply) => {
  reply.headers(headers);
  return body;
});
await app.listen({ host: "127.0.0.1", port: 0 });
serveAsChild(boundPort(app.server), () => app.close());

import { readFileSync } from "node:fs";
import Fastify from "fastify";
import { boundPort, serveAsChild } from "./child-server.js";

// The baseline: a bare Fastify route answering a fixed body of the same size as a resolve answer
// (no auth, no store, no schema). argv: <json file>. Sends { port } over IPC.
const body = JSON.parse(readFileSync(process.argv[2], "utf8")) as unknown;
const app = Fastify({ logger: false });
app.get("/bare", async () => body);
await app.listen({ host: "127.0.0.1", port: 0 });
serveAsChild(boundPort(app.server), () => app.close());

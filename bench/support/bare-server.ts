import { readFileSync } from "node:fs";
import Fastify from "fastify";

// The baseline: a bare Fastify route answering a fixed body of the same size as a resolve answer
// (no auth, no store, no schema). argv: <json file>. Sends { port } over IPC.
const body = JSON.parse(readFileSync(process.argv[2], "utf8")) as unknown;
const app = Fastify({ logger: false });
app.get("/bare", async () => body);
await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address();
process.send?.({ port: typeof address === "object" && address ? address.port : 0 });
// The parent asks for this process's CPU time around each run: CPU per request is the figure
// that machine load disturbs least.
process.on("message", (m) => {
  if (m === "cpu") {
    const u = process.cpuUsage();
    process.send?.({ cpu: u.user + u.system });
  }
});
process.on("disconnect", () => {
  void app.close().then(() => process.exit(0));
});

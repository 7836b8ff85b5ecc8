// From a block mined to its change feed event, through a real SSE client, and to its webhook
// delivery at a real receiver on 127.0.0.1.
//
//   npx tsx bench/feed.bench.ts [--blocks 30] [--postgres 1] [--heads 1]
//
// An unseeded POLYGON devnet whose chain mines only when told, the crawler following it (poll
// interval 50 ms, as `CRAWLER_POLL_INTERVAL_MS` may be set; with `--heads 1` woken by
// eth_subscribe("newHeads") too, polling every 1,000 ms), the API in the same process on a fresh
// store (SQLite, or with `--postgres 1` a fresh PostgreSQL database on 127.0.0.1:5432, dropped
// afterwards), an `eventsource` client on GET /svc/api/v1/changes, and a webhook of the project
// (every event type) whose receiver verifies each signature with `standardwebhooks`. Each round
// mines one block with one FNS mint and times mined → `domain.created` received on the stream, and
// mined → the same event's delivery at the receiver (the deliverer polls the queue every 100 ms, its
// default). Prints one JSON line: median, p95 and max in ms, with the load average. The feed's own
// part is the time from the crawler's commit (the event's `time`) to the client
// (`writeToClientMs`).
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { EventSource } from "eventsource";
import { Webhook } from "standardwebhooks";
import { sealSecret } from "../src/accounts/sealed-secret.js";
import { WebhooksRepo } from "../src/accounts/webhooks.repo.js";
import { newWebhookSecret, WEBHOOK_SECRET_PURPOSE } from "../src/workers/webhook-worker.js";
import { callData } from "../src/devnet/deploy.js";
import { DEVNET_DEPLOYER } from "../src/devnet/devnet.js";
import { quantileMs as q, startDevnetWorld } from "./support/devnet-world.js";
import { numberArg } from "./support/args.js";

const BLOCKS = numberArg("blocks", 30);
const POSTGRES = numberArg("postgres", 0) !== 0;
const HEADS = numberArg("heads", 0) !== 0;

const world = await startDevnetWorld({
  sourceIds: ["fns-polygon"],
  pollMs: HEADS ? 1_000 : 50,
  newHeads: HEADS,
  postgres: POSTGRES,
  listen: true,
});
const registry = world.contract("fns-polygon", "registry");

// The receiver: every delivery verified, its arrival time kept by event id.
const secret = newWebhookSecret();
const verifier = new Webhook(secret);
const delivered = new Map<number, number>();
let unverified = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = performance.now();
    const body = Buffer.concat(chunks).toString("utf8");
    try {
      verifier.verify(body, req.headers as Record<string, string>);
      delivered.set(JSON.parse(body).data.id, at);
    } catch {
      unverified++;
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
const port = (receiver.address() as { port: number }).port;
await new WebhooksRepo(world.store.accounts).create(
  world.projectId,
  { url: `http://127.0.0.1:${port}/hook`, description: "", eventTypes: [], filters: {}, enabled: true },
  (await world.store.changeLog.changeLogBounds()).newest,
  Date.now(),
  (id) => sealSecret(world.ctx.pepper, WEBHOOK_SECRET_PURPOSE, id, secret),
);

const received: Array<{ at: number; wall: number; time: number; id: number }> = [];
const es = new EventSource(`${world.base}/svc/api/v1/changes?types=domain.created`, {
  fetch: (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers ?? {}), "api-key": world.key } }),
});
es.addEventListener("domain.created", (m) => {
  const data = JSON.parse(m.data);
  received.push({ at: performance.now(), wall: Date.now(), time: Date.parse(data.time), id: data.id });
});
await new Promise<void>((resolve, reject) => {
  es.onopen = () => resolve();
  es.onerror = (e) => reject(new Error(`feed: ${e.message}`));
});

const lags: number[] = [];
const feedLags: number[] = [];
const hookLags: number[] = [];
const cpuStart = process.cpuUsage();
for (let i = 0; i < BLOCKS; i++) {
  await world.sender.send([
    { to: registry, data: callData("FNSRegistry", "mint", [DEVNET_DEPLOYER, `b${i}`, "feedbench"]) },
  ]);
  const mined = performance.now();
  await world.sender.mine();
  while (received.length <= i) await new Promise((r) => setTimeout(r, 1));
  const event = received[i]!;
  lags.push(event.at - mined);
  feedLags.push(event.wall - event.time);
  while (!delivered.has(event.id)) await new Promise((r) => setTimeout(r, 1));
  hookLags.push(delivered.get(event.id)! - mined);
  // Blocks at random phases of the crawler's poll.
  await new Promise((r) => setTimeout(r, Math.random() * 60));
}
const cpu = process.cpuUsage(cpuStart);
es.close();
const spread = (xs: number[]) => ({ p50: q(xs, 0.5), p95: q(xs, 0.95), max: q(xs, 1) });
console.log(
  JSON.stringify({
    bench: "feed",
    store: POSTGRES ? "postgres" : "sqlite",
    crawler: HEADS ? "newHeads + polling 1000 ms" : "polling 50 ms",
    blocks: BLOCKS,
    minedToEventMs: spread(lags),
    writeToClientMs: spread(feedLags),
    minedToWebhookMs: spread(hookLags),
    unverifiedDeliveries: unverified,
    targets: "SSE median < 300 ms, webhook median < 500 ms",
    cpuMsPerBlock: Math.round((cpu.user + cpu.system) / 1000 / BLOCKS),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
  }),
);
receiver.closeAllConnections();
receiver.close();
await world.stop();
if (unverified > 0) process.exit(1);

// Freshness: from a block mined to the API serving what it holds, with the crawler woken by
// eth_subscribe("newHeads") against the polling baseline (CRAWLER_POLL_INTERVAL_MS, 1000 ms by
// default), measured in the same run on one local POLYGON devnet.
//
//   npx tsx bench/freshness.bench.ts [--rounds 30]
//
// Each round mints one UNS name through the real MintingManager, mines its block, and asks the
// API (in process, app.inject) for the name every 5 ms until it answers 200. Prints one JSON line
// per mode (median, p90 and max in ms) and the ratio of the medians. The change feed and webhook
// figures are bench/feed.bench.ts's.
import { loadavg } from "node:os";
import { unsCall } from "../src/devnet/real-uns.js";
import { quantileMs, startDevnetWorld } from "./support/devnet-world.js";
import { numberArg } from "./support/args.js";

const ROUNDS = numberArg("rounds", 30);
const POLL_MS = 1_000;
const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

async function run(mode: "newHeads" | "polling") {
  const world = await startDevnetWorld({
    sourceIds: ["uns-polygon"],
    pollMs: POLL_MS,
    newHeads: mode === "newHeads",
  });
  const manager = world.contract("uns-polygon", "mintingManager");
  const latencies: number[] = [];
  try {
    // Warm-up round (the subscription, the first reads), not counted.
    for (let round = -1; round < ROUNDS; round++) {
      const name = `fresh${round + 1}x${Date.now()}.x`;
      await world.sender.send([
        {
          to: manager,
          data: unsCall("MintingManager", "issueWithRecords", [OWNER, name.split("."), [], [], false]),
        },
      ]);
      // Rounds start at random points of the polling interval, as blocks do.
      await new Promise((r) => setTimeout(r, Math.random() * POLL_MS));
      await world.sender.mine();
      const mined = performance.now();
      for (;;) {
        const res = await world.app.inject({
          url: `/svc/api/v1/resolve?domain=${name}`,
          headers: { "api-key": world.key },
        });
        if (res.statusCode === 200) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      if (round >= 0) latencies.push(performance.now() - mined);
    }
  } finally {
    await world.stop();
  }
  const r = {
    mode,
    rounds: latencies.length,
    medianMs: quantileMs(latencies, 0.5),
    p90Ms: quantileMs(latencies, 0.9),
    maxMs: quantileMs(latencies, 1),
  };
  console.log(JSON.stringify(r));
  return r;
}

const polling = await run("polling");
const heads = await run("newHeads");
console.log(
  JSON.stringify({
    bench: "freshness",
    what: "block mined → API serves it",
    pollIntervalMs: POLL_MS,
    newHeadsMedianMs: heads.medianMs,
    pollingMedianMs: polling.medianMs,
    ratio: Number((polling.medianMs / Math.max(1, heads.medianMs)).toFixed(2)),
    target: "median < 250 ms",
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    loadAverage: loadavg().map((x) => Math.round(x * 100) / 100),
  }),
);

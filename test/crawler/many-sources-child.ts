// The crawler with many sources in a process of its own, for the process-warnings test: prints
// every process warning it saw as one JSON line. Arguments: DATA_DIR (with devnet.json), count.
import { findDevnetManifest, sourcesFromManifest } from "../../src/devnet/manifest.js";
import { startCrawler, tempStore, waitFor } from "./crawler-harness.js";

const warnings: string[] = [];
process.on("warning", (w) => warnings.push(`${w.name}: ${w.message}`));

const [dataDir, count] = process.argv.slice(2);
const manifest = findDevnetManifest(dataDir);
if (!manifest) throw new Error(`no devnet in ${dataDir}`);
const [real] = sourcesFromManifest(manifest);
// The first source indexes the seeded names; the others watch addresses without logs, so that
// every loop requests, prefetches and polls like a live source without writing the same domains.
const sources = Array.from({ length: Number(count) }, (_, i) => {
  if (i === 0) return real;
  const empty = `0x${(i + 1).toString(16).padStart(40, "0")}`;
  const addresses = Object.fromEntries(Object.keys(real.contracts.addresses).map((k) => [k, empty]));
  return { ...real, id: `${real.id}-${i}`, contracts: { ...real.contracts, addresses } };
});

const t = await tempStore();
const { crawler } = startCrawler(t.store, sources, { sync: { pollIntervalMs: 20 } });
await waitFor(async () => crawler.status().every((s) => s.state === "live"), 60_000, "every source live");
// Some polls of every source (20 ms apart): each one waits on the stop signal between them.
await new Promise((r) => setTimeout(r, 500));
await crawler.stop();
await t.cleanup();
process.stdout.write(`${JSON.stringify({ warnings, states: crawler.status().map((s) => s.state) })}\n`);

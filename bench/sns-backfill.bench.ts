// The SNS source's backfill of many `.sol` names against a bare getProgramAccounts of the same
// accounts, on the devnet's Solana (LiteSVM behind our JSON-RPC, in this process).
//
//   npx tsx bench/sns-backfill.bench.ts [--names 100000] [--children 0]
//
// Seeds `--names` second-level names (each a name account and its reverse account, 1,000 owners),
// then times (1) the bare reads: getProgramAccounts of the `.sol` root's children and of the
// reverse class, base64, through @solana/kit, and (2) one pass of the SNS source into a fresh
// SQLite store (the same reads, plus Records V2, primaries and NFT records, the fold of every name,
// and the journal and map writes). With `--children 1` the pass also reads each domain's children
// (one getProgramAccounts per parent); the devnet answers each by scanning every account, so keep
// `--names` small then. The endpoint (LiteSVM and our JSON-RPC) runs in a child process
// (support/solana-server.ts), so each peak RSS is its own. Prints one JSON line: accounts/s of
// each, their ratio, names written, the peak RSS of this process (the bare read, then the source's
// pass and its store) and of the endpoint's.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createSnsSync } from "../src/crawler/sns-sync.js";
import { createSolanaReader } from "../src/crawler/solana-reader.js";
import { createSource } from "../src/crawler/sources.js";
import { SNS_PROGRAMS } from "../src/providers/sns/sns-program.js";
import { SNS_MAINNET } from "../src/providers/sns/sns.adapter.js";
import { createStore } from "../src/store/create-store.js";
import { numberArg } from "./support/args.js";
import { peakRssOf, startChild, stopChild } from "./support/child-server.js";

const NAMES = numberArg("names", 100_000);
const CHILDREN = numberArg("children", 0) !== 0;

let t = performance.now();
const endpoint = await startChild("solana-server.ts", [String(NAMES)]);
const seedMs = performance.now() - t;
const rpc = { url: `http://127.0.0.1:${endpoint.port}` };

const reader = createSolanaReader(rpc.url);
t = performance.now();
const [domains, reverses] = await Promise.all([
  reader.programAccounts(SNS_PROGRAMS.nameService, [{ memcmp: { offset: 0, bytes: SNS_PROGRAMS.solRoot } }]),
  reader.programAccounts(SNS_PROGRAMS.nameService, [
    { memcmp: { offset: 64, bytes: SNS_PROGRAMS.reverseClass } },
  ]),
]);
const bareMs = performance.now() - t;
const accounts = domains.length + reverses.length;

const dir = mkdtempSync(join(tmpdir(), "omniname-sns-bench-"));
const store = await createStore({ databaseUrl: undefined, dataDir: dir });
const sync = createSnsSync({
  source: { ...createSource("NAMESPACE_D", "SOLANA", SNS_MAINNET.SOLANA, ""), rpcUrl: rpc.url },
  store,
  signals: () => ({ baseScore: 50, spam: false, csamOk: true, kyc: false, tags: [] }),
  log: pino({ level: "silent" }),
  children: CHILDREN,
});
t = performance.now();
const pass = await sync.scanOnce();
const passMs = performance.now() - t;
await store.close();
rmSync(dir, { recursive: true, force: true });
const endpointPeakRssMb = await peakRssOf(endpoint.child);
await stopChild(endpoint.child);

console.log(
  JSON.stringify({
    bench: "sns-backfill",
    names: NAMES,
    children: CHILDREN,
    seedMs: Math.round(seedMs),
    accounts,
    bareGetProgramAccounts: {
      ms: Math.round(bareMs),
      accountsPerSec: Math.round(accounts / (bareMs / 1000)),
    },
    backfill: {
      ms: Math.round(passMs),
      accountsPerSec: Math.round(accounts / (passMs / 1000)),
      namesWritten: pass.changed,
      issues: pass.issues.length,
    },
    ratio: Number((bareMs / passMs).toFixed(3)),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    endpointPeakRssMb,
    load: loadavg().map((l) => Number(l.toFixed(2))),
  }),
);
if (pass.changed !== NAMES) {
  console.error(`expected ${NAMES} names written, got ${pass.changed}`);
  process.exit(1);
}

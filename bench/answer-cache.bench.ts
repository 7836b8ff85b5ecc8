/**
 * What the v1 answer cache (src/api/v1-answer-cache.ts) saves: CPU time per request (app.inject,
 * in process, so no socket and no client share the figure) of resolve, deep-resolve and
 * reverse-resolve answered from the cache, against the same requests with the cache missing every
 * time (the map's read version reported new on every call: everything else, the store's read
 * caches and the memoized record bytes included, as in production). Slices alternate between the
 * two so that the machine's other load falls on each alike. Prints one JSON line: CPU µs per
 * request of each, and the ratio. BENCH_REQUESTS (default 3,000 per slice), BENCH_SLICES (5).
 */
import { createTestApp } from "../test/api/helpers/test-app.js";
import { ADDR } from "../test/api/helpers/world.js";

const PER_SLICE = Number(process.env.BENCH_REQUESTS ?? 3_000);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
const V1 = "/svc/api/v1";

const t = await createTestApp({ backend: "sqlite" });
try {
  const urls = [
    `${V1}/resolve?domain=alice.wallet`,
    `${V1}/deep-resolve?domain=alice.wallet`,
    `${V1}/reverse-resolve?walletAddress=${ADDR.alice}`,
  ];
  const store = t.store;
  const readVersion = store.domainMap.readVersion.bind(store.domainMap);
  let moving = 0;
  const modes = {
    cached: () => {
      store.domainMap.readVersion = readVersion;
    },
    missing: () => {
      store.domainMap.readVersion = () => ++moving;
    },
  };
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await t.app.inject({ url: urls[i % urls.length], headers: { "api-key": t.key } });
      if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    }
  };
  for (const set of Object.values(modes)) {
    set();
    await run(600);
  }
  const cpu: Record<string, number> = { cached: 0, missing: 0 };
  for (let s = 0; s < SLICES; s++) {
    const order = Object.entries(modes);
    for (const [name, set] of s % 2 === 0 ? order : order.reverse()) {
      set();
      const start = process.cpuUsage();
      await run(PER_SLICE);
      const used = process.cpuUsage(start);
      cpu[name] += used.user + used.system;
    }
  }
  const n = PER_SLICE * SLICES;
  console.log(
    JSON.stringify({
      bench: "answer-cache",
      requests: n,
      cpuMicrosPerRequest: {
        cached: Math.round((cpu.cached / n) * 10) / 10,
        missing: Math.round((cpu.missing / n) * 10) / 10,
      },
      ratioCachedToMissing: Math.round((cpu.cached / cpu.missing) * 1000) / 1000,
    }),
  );
} finally {
  await t.close();
}

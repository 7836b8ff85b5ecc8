/**
 * The cost of a key's own limits on API v1: CPU time per resolve (app.inject, in process, so no
 * socket and no client share the figure) with a key without limits (the baseline), a key limited
 * to endpoints with an expiry (the api-key hook reads the clock and the endpoint name), and a key
 * limited to networks and providers (its settings are the project's narrowed once per cache load;
 * the scope hook checks the named parameters). Slices alternate between the three so that the
 * machine's other load falls on each alike. Prints one JSON line: CPU µs per request and the ratio
 * of each to the baseline. BENCH_REQUESTS (default 4,000 per slice), BENCH_SLICES (5).
 */
import { createConsoleTestApp, V1 } from "../test/console/helpers/console-app.js";

const PER_SLICE = Number(process.env.BENCH_REQUESTS ?? 4_000);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);

const t = await createConsoleTestApp({
  config: { plans: { free: { rps: 1e9, monthlyQuota: 1e12, maxProjects: 5, maxKeys: 10, maxMembers: 5 } } },
});
try {
  const project = await t.store.projects.createProject({ name: "bench" });
  const keys = {
    unlimited: (await t.services.projects.createKey(project.id, { name: "plain" })).key,
    endpointsAndExpiry: (
      await t.services.projects.createKey(project.id, {
        name: "endpoints",
        endpoints: ["resolve", "deep-resolve"],
        expiresAt: new Date(t.clock.now + 86_400_000).toISOString(),
      })
    ).key,
    networksAndProviders: (
      await t.services.projects.createKey(project.id, {
        name: "networks",
        networks: ["POLYGON", "ETHEREUM"],
        providers: ["NAMESPACE_A"],
      })
    ).key,
  };
  const url = `${V1}/resolve?domain=alice.wallet&network=POLYGON`;
  const cpu: Record<string, number> = { unlimited: 0, endpointsAndExpiry: 0, networksAndProviders: 0 };
  for (const key of Object.values(keys)) {
    const warm = await t.app.inject({ url, headers: { "api-key": key } });
    if (warm.statusCode !== 200) throw new Error(`warm-up: ${warm.statusCode} ${warm.body}`);
    for (let i = 0; i < 500; i++) await t.app.inject({ url, headers: { "api-key": key } });
  }
  for (let s = 0; s < SLICES; s++) {
    // Each slice starts with another key: none always runs first (or after the others' garbage).
    const order = Object.entries(keys);
    for (const [name, key] of [...order.slice(s % 3), ...order.slice(0, s % 3)]) {
      const start = process.cpuUsage();
      for (let i = 0; i < PER_SLICE; i++) await t.app.inject({ url, headers: { "api-key": key } });
      const used = process.cpuUsage(start);
      cpu[name] += used.user + used.system;
    }
  }
  const n = PER_SLICE * SLICES;
  const perReq = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Math.round((v / n) * 10) / 10]));
  const ratio = Object.fromEntries(
    Object.entries(cpu).map(([k, v]) => [k, Math.round((v / cpu.unlimited) * 1000) / 1000]),
  );
  console.log(
    JSON.stringify({
      bench: "key-scopes",
      requests: n,
      cpuMicrosPerRequest: perReq,
      ratioToUnlimited: ratio,
    }),
  );
} finally {
  await t.close();
}

import { connect } from "node:http2";
import autocannon from "autocannon";

/** Requests per second and the share that did not answer 200. */
export interface DohLoad {
  rps: number;
  errors: number;
  p99Ms: number;
}

/**
 * DoH GETs (`/dns-query?dns=…`) over HTTP/1.1 with TLS: autocannon, keep-alive, `connections`
 * connections, for `seconds`.
 */
export async function dohOverHttp1(
  origin: string,
  paths: string[],
  seconds: number,
  connections = 50,
): Promise<DohLoad> {
  let i = 0;
  const r = await autocannon({
    url: origin,
    connections,
    duration: seconds,
    requests: [{ method: "GET", setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  return { rps: r.requests.average, errors: r.non2xx + r.errors + r.timeouts, p99Ms: r.latency.p99 };
}

/**
 * The same GETs over HTTP/2 (as RFC 8484 recommends): `sessions` TLS connections, each with
 * `streams` requests in flight, for `seconds`. The certificate is the bench's own (not checked).
 */
export async function dohOverHttp2(
  origin: string,
  paths: string[],
  seconds: number,
  sessions = 4,
  streams = 50,
): Promise<DohLoad> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  let i = 0;
  const lat: number[] = [];
  const one = (s: ReturnType<typeof connect>) =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = s.request({ ":path": paths[i++ % paths.length] });
      req.on("response", (h) => {
        if (h[":status"] !== 200) errors++;
      });
      req.on("data", () => {});
      req.on("end", () => {
        done++;
        if (lat.length < 200_000) lat.push(performance.now() - t);
        resolve();
      });
      req.on("error", () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const all = Array.from({ length: sessions }, () => connect(origin, { rejectUnauthorized: false }));
  const t0 = performance.now();
  await Promise.all(
    all.flatMap((s) =>
      Array.from({ length: streams }, async () => {
        while (performance.now() < end) await one(s);
      }),
    ),
  );
  const elapsed = (performance.now() - t0) / 1000;
  for (const s of all) s.close();
  lat.sort((a, b) => a - b);
  return { rps: done / elapsed, errors, p99Ms: lat[Math.floor(lat.length * 0.99)] ?? 0 };
}

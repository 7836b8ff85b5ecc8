import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEY, type Row } from "./helpers/parameter-rows.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { HISTORY_ROWS } from "./helpers/v1-history-rows.js";
import { PARAMETER_ROWS } from "./helpers/v1-parameter-rows.js";
import { ADDR } from "./helpers/world.js";

/*
 * The OpenAPI document judged by a validator we did not write: Prism (`prism proxy --errors`) in
 * front of the server, both on 127.0.0.1. Every request of the corpus goes to the server directly
 * and through Prism:
 * - where the server accepts a request (any answer but a 400/401 refusal), Prism must forward it
 *   (the document accepts it) and give back the server's answer unchanged, with no violation;
 * - where Prism refuses a request (422: the document does not accept it; 401: no api-key), the
 *   server must refuse it too (400, naming the same parameter; 401);
 * - no answer of the server may violate the document (Prism answers 500 with sl-violations).
 * application/dns-json: Prism reads it as text (not a JSON media type by its name); the JSON form's
 * body is checked here with Ajv against the document's schema.
 * Prism is given the served document and the server's URL only, both on 127.0.0.1; it loads no
 * remote reference (the document has none) and its install-time analytics are denied (package.json).
 */

const V1 = "/svc/api/v1";
const MALFORMED = /%(?![0-9A-Fa-f]{2})/;
const PRISM = join(process.cwd(), "node_modules/.bin/prism");

interface Probe {
  label: string;
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

const json = (body: unknown) => ({
  headers: { "content-type": "application/json" },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

function rowProbe(row: Row): Probe {
  const headers: Record<string, string | string[]> = {};
  if (row.apiKey !== null) headers["api-key"] = row.apiKey === undefined ? KEY : row.apiKey;
  return {
    label: `${row.route} ${row.param}: ${row.what}`,
    method: "GET",
    path: `${V1}/${row.route}?${row.query}`,
    headers,
  };
}

/** What the document used to refuse and the server accepts (found by Prism), and their neighbours. */
const VARIANTS: Probe[] = [
  ...["network=polygon", "network=MATIC", "network=eth", "network=%20Polygon%20", "network=", "provider=ENS"]
    .concat(["provider=FNS", "provider=fns", "provider=unstoppable%20domains", "provider=namespace-a"])
    .concat(["explain=yes", "explain=TRUE", "explain=0", "explain=", "provenance=1", "provenance=No"])
    .flatMap((q) =>
      (["resolve", "deep-resolve"] as const).map((route) => ({
        label: `${route} ${q}`,
        method: "GET" as const,
        path: `${V1}/${route}?domain=alice.wallet&${q}`,
      })),
    ),
  {
    label: "fullQualifiedDomain alone",
    method: "GET",
    path: `${V1}/resolve?fullQualifiedDomain=alice.wallet`,
  },
  {
    label: "deep fullQualifiedDomain alone",
    method: "GET",
    path: `${V1}/deep-resolve?fullQualifiedDomain=bob.x`,
  },
  { label: "no match", method: "GET", path: `${V1}/resolve?domain=nobody.wallet` },
  { label: "at", method: "GET", path: `${V1}/resolve?domain=alice.wallet&at=2024-05-01T12:00:00Z` },
  {
    label: "reverse padded, network alias",
    method: "GET",
    path: `${V1}/reverse-resolve?walletAddress=%20${ADDR.alice}%20&network=matic&provider=uns&provenance=yes`,
  },
];

const BATCH: Probe[] = [
  ["valid", "resolve", { domains: ["alice.wallet", "nobody.wallet", "alice", ""] }],
  ['"network": ""', "resolve", { domains: ["alice.wallet"], network: "" }],
  [
    "network polygon, provider FNS",
    "resolve",
    { domains: ["alice.wallet"], network: "polygon", provider: "FNS" },
  ],
  [
    "network MATIC, provider ENS",
    "deep-resolve",
    { domains: ["alice.wallet"], network: "MATIC", provider: "ENS" },
  ],
  ["network null", "deep-resolve", { domains: ["alice.wallet"], network: null }],
  [
    "reverse, eth",
    "reverse-resolve",
    { walletAddresses: [ADDR.alice, "nope", ` ${ADDR.bob} `], network: "eth" },
  ],
  ["unknown fields", "resolve", { domains: ["alice.wallet"], extra: 1 }],
  ["unknown network", "resolve", { domains: ["alice.wallet"], network: "MARS" }],
  ["network not a string", "resolve", { domains: ["alice.wallet"], network: 5 }],
  ["no domains", "resolve", { network: "eth" }],
  ["domains null", "resolve", { domains: null }],
  ["domains empty", "resolve", { domains: [] }],
  ["domains not an array", "resolve", { domains: "alice.wallet" }],
  ["a number among the domains", "resolve", { domains: ["alice.wallet", 7] }],
  ["over 1,000 inputs", "resolve", { domains: Array.from({ length: 1001 }, () => "alice.wallet") }],
  ["an array body", "resolve", ["alice.wallet"]],
  // Not here: a body that is not JSON. Prism 5.16 never answers it (the request hangs).
].map(([label, route, body]) => ({
  label: `batch/${route} ${label}`,
  method: "POST" as const,
  path: `${V1}/batch/${route}`,
  ...json(body),
}));

const BATCH_QUERIES: Probe[] = ["provenance=1", "provenance=yes", "at=2024-05-01", "provenance=maybe"].map(
  (q) => ({
    label: `batch/resolve ?${q}`,
    method: "POST",
    path: `${V1}/batch/resolve?${q}`,
    ...json({ domains: ["alice.wallet"] }),
  }),
);

// alice.wallet A, as an RFC 8484 message (id 0, RD).
const DNS_QUERY = Buffer.from("00000100000100000000000005616c6963650677616c6c65740000010001", "hex");
const DOH: Probe[] = [
  ["wire GET", "GET", `/dns-query?dns=${DNS_QUERY.toString("base64url")}`],
  ["JSON form", "GET", "/dns-query?name=alice.wallet&type=A"],
  ["JSON form, no such name", "GET", "/dns-query?name=nobody.wallet&type=TXT"],
  ["not base64url", "GET", "/dns-query?dns=!!!"],
  ["bad type", "GET", "/dns-query?name=alice.wallet&type=NOPE"],
  ["no parameter", "GET", "/dns-query"],
  ["v1 JSON form", "GET", `${V1}/dns-query?name=alice.wallet`],
].map(([label, method, path]) => ({ label: `dns-query ${label}`, method: method as "GET", path }));
const DOH_POSTS: Probe[] = [
  { label: "dns-query wire POST", method: "POST", path: "/dns-query", body: DNS_QUERY },
  { label: "dns-query v1 wire POST", method: "POST", path: `${V1}/dns-query`, body: DNS_QUERY },
  { label: "dns-query POST not a query", method: "POST", path: "/dns-query", body: Buffer.from([1, 2]) },
].map((p) => ({ ...p, method: "POST" as const, headers: { "content-type": "application/dns-message" } }));
const NO_KEY: Probe[] = [
  { label: "v1 dns-query without a key", method: "GET", path: `${V1}/dns-query?name=alice.wallet` },
  {
    label: "batch without a key",
    method: "POST",
    path: `${V1}/batch/resolve`,
    ...json({ domains: ["a.b"] }),
  },
];
// The change feed streams (its 200 is no JSON answer): only its refusals belong here.
const HEALTH: Probe[] = ["/healthz", "/readyz", `${V1}/changes?after=%ZZ`].map((path) => ({
  label: `GET ${path}`,
  method: "GET",
  path,
}));

const withKey = (p: Probe): Probe =>
  p.headers?.["api-key"] !== undefined || NO_KEY.includes(p) || !p.path.startsWith(V1)
    ? p
    : { ...p, headers: { ...p.headers, "api-key": KEY } };

const CORPUS: Probe[] = [
  ...PARAMETER_ROWS.map(rowProbe),
  ...HISTORY_ROWS.map(rowProbe),
  ...[...VARIANTS, ...BATCH, ...BATCH_QUERIES, ...HEALTH].map(withKey),
  ...DOH.map((p) => (p.path.startsWith(V1) ? withKey(p) : p)),
  ...DOH_POSTS.map((p) => (p.path.startsWith(V1) ? withKey(p) : p)),
  ...NO_KEY,
];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

interface Answer {
  status: number;
  type: string;
  violations: string | null;
  body: Buffer;
}

async function send(base: string, p: Probe, key: string): Promise<Answer> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(p.headers ?? {}))
    for (const one of [v].flat()) headers.append(k, one === KEY ? key : one);
  const body = p.body === undefined || typeof p.body === "string" ? p.body : new Uint8Array(p.body);
  const res = await fetch(`${base}${p.path}`, {
    method: p.method,
    headers,
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: res.status,
    type: res.headers.get("content-type") ?? "",
    violations: res.headers.get("sl-violations"),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

describe("the OpenAPI document, judged by Prism's validation proxy", () => {
  let t: TestApp;
  let prism: ChildProcess;
  let server = "";
  let proxy = "";
  let doc: { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    doc = (await (await fetch(`${server}${V1}/openapi.json`)).json()) as typeof doc;
    const port = await freePort();
    proxy = `http://127.0.0.1:${port}`;
    prism = spawn(
      PRISM,
      ["proxy", `${server}${V1}/openapi.json`, server, "--errors", "-h", "127.0.0.1", "-p", String(port)],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "",
          SCARF_ANALYTICS: "false",
          DO_NOT_TRACK: "1",
        },
      },
    );
    let out = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${out}`)), 60_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        if (out.includes("Prism is listening")) {
          clearTimeout(timer);
          resolve();
        }
      };
      prism.stdout?.on("data", onData);
      prism.stderr?.on("data", onData);
      prism.on("exit", (code) => reject(new Error(`Prism exited (${code}):\n${out}`)));
    });
  }, 90_000);

  afterAll(async () => {
    if (prism?.pid !== undefined && prism.exitCode === null) prism.kill("SIGTERM");
    await t?.close();
  });

  it(`sends ${CORPUS.length} requests through Prism: the document accepts what the server accepts, and every answer keeps to it`, async () => {
    const problems: string[] = [];
    const tally = { forwarded: 0, refusedByBoth: 0, rewritten: 0 };
    const jsonForm = new Ajv({ strict: false }).compile(
      (doc.paths["/dns-query"].get.responses["200"] as { content: Record<string, { schema: object }> })
        .content["application/dns-json"].schema,
    );
    for (const p of CORPUS) {
      let direct: Answer;
      let via: Answer;
      try {
        direct = await send(server, p, t.key);
        via = await send(proxy, p, t.key);
      } catch (e) {
        problems.push(`${p.label}: ${String(e)}`);
        continue;
      }
      const what = `${p.label} (${p.method} ${p.path.slice(0, 120)})`;
      if (via.type.startsWith("application/problem+json")) {
        const problem = JSON.parse(via.body.toString()) as {
          status: number;
          validation?: Array<{ location: string[]; message: string }>;
        };
        if (via.violations !== null || problem.status >= 500) {
          problems.push(`${what}: the server's answer breaks the document: ${via.violations ?? via.body}`);
          continue;
        }
        // Prism refuses the request: the server must refuse it too, for the same parameter.
        const refused = direct.status === problem.status || (problem.status === 422 && direct.status === 400);
        const named = (problem.validation ?? []).every((v) => {
          const param = v.location[1];
          return (
            // Prism writes query parameter names in lower case.
            param === undefined ||
            v.location[0] === "body" ||
            direct.body.toString().toLowerCase().includes(`"${param.toLowerCase()}`)
          );
        });
        if (!refused || !named)
          problems.push(
            `${what}: the document refuses (${via.body}), the server answers ${direct.status} ${direct.body.toString().slice(0, 200)}`,
          );
        else tally.refusedByBoth++;
        continue;
      }
      tally.forwarded++;
      if (via.violations !== null) problems.push(`${what}: violations ${via.violations}`);
      // Two things Prism changes on the way, which are not the document's: it re-encodes a query
      // whose percent-encoding is malformed (%ZZ reaches the server as %25ZZ), and it passes a
      // binary body (application/dns-message) through as text. There, status and type must agree.
      if (MALFORMED.test(p.path) || direct.type.startsWith("application/dns-message")) {
        tally.rewritten++;
        if (via.status !== direct.status || via.type !== direct.type)
          problems.push(
            `${what}: through Prism ${via.status} ${via.type}, directly ${direct.status} ${direct.type}`,
          );
        continue;
      }
      if (via.status !== direct.status || !via.body.equals(direct.body))
        problems.push(
          `${what}: through Prism ${via.status} ${via.body.toString().slice(0, 200)}, directly ${direct.status} ${direct.body.toString().slice(0, 200)}`,
        );
      if (direct.type.startsWith("application/dns-json") && !jsonForm(JSON.parse(direct.body.toString())))
        problems.push(`${what}: the JSON form breaks its schema: ${JSON.stringify(jsonForm.errors)}`);
    }
    console.log(
      `Prism judge: ${CORPUS.length} requests, ${tally.forwarded} forwarded, ${tally.refusedByBoth} refused by both, ${tally.rewritten} rewritten by Prism, ${problems.length} problems`,
    );
    expect(problems).toEqual([]);
  }, 300_000);
});

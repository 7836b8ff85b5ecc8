import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiRoleEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../../../test/helpers/server-process.js";
import { createStore } from "../../../src/store/create-store.js";
import { createOmninameClient, OmninameError, parseRetryAfter } from "../src/index.js";

const PACKAGE = new URL("..", import.meta.url).pathname;
const ROOT = new URL("../../..", import.meta.url).pathname;

/** A local HTTP server answering each request with the next of `answers` (the last one repeats). */
async function scripted(answers: Array<{ status: number; headers?: Record<string, string>; body: string }>) {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    const a = answers[Math.min(hits++, answers.length - 1)];
    res.writeHead(a.status, { "content-type": "application/json", ...a.headers });
    res.end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, hits: () => hits, close: () => server.close() };
}

const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const ERROR_429 = JSON.stringify({ result: false, error: { code: "RATE_LIMITED", message: "slow down" } });
const OK = JSON.stringify({ result: true, data: [] });

describe("@omniname/client against a real omniname", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-client-"));
  let server: ServerProcess;
  let key: string;
  beforeAll(async () => {
    server = await startServerProcess(apiRoleEnv(dataDir, { DATABASE_URL: "" }), ["--fixtures"], 120_000);
    key = readFileSync(join(dataDir, "demo-api-key"), "utf8").trim();
  }, 150_000);
  afterAll(async () => {
    if (server) await stopServerProcess(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("resolves, deep-resolves and reverse-resolves with typed answers", async () => {
    const client = createOmninameClient({ baseUrl: `${server.url}/`, apiKey: key });
    const alice = await client.resolve("alice.wallet");
    expect(alice.domain).toBe("alice.wallet");
    const all = await client.deepResolve("alice.wallet", { network: "POLYGON" });
    expect(all.every((d) => d.network === "POLYGON")).toBe(true);
    const reverse = await client.reverseResolve(alice.ownerAddress);
    expect(Array.isArray(reverse)).toBe(true);
  });

  it.each([
    [
      "an unknown name",
      (c: ReturnType<typeof createOmninameClient>) => c.resolve("nobody-at-all.wallet"),
      404,
      "DOMAIN_NOT_FOUND",
    ],
    [
      "a bad name",
      (c: ReturnType<typeof createOmninameClient>) => c.resolve("bad name!.wallet"),
      400,
      "INVALID_DOMAIN",
    ],
    [
      "a bad address",
      (c: ReturnType<typeof createOmninameClient>) => c.reverseResolve("0xZZ"),
      400,
      "INVALID_ADDRESS",
    ],
  ])("%s is an OmninameError with its code", async (_title, call, status, code) => {
    const client = createOmninameClient({ baseUrl: server.url, apiKey: key });
    const err = await call(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OmninameError);
    expect(err).toMatchObject({ status, code });
  });

  it("splits more than 1,000 inputs into batch calls, answers in input order, bad inputs as items", async () => {
    const client = createOmninameClient({ baseUrl: server.url, apiKey: key });
    const names: string[] = Array.from({ length: 1_001 }, (_, i) =>
      i === 7 ? "bad name!.wallet" : "alice.wallet",
    );
    names[1_000] = "nobody-at-all.wallet";
    const items = await client.resolveMany(names);
    expect(items).toHaveLength(1_001);
    expect(items.map((it) => it.input)).toEqual(names);
    expect(items[0]).toMatchObject({ result: true, data: { domain: "alice.wallet" } });
    expect(items[7]).toMatchObject({ result: false, error: { code: "INVALID_DOMAIN" } });
    expect(items[1_000]).toMatchObject({ result: false, error: { code: "DOMAIN_NOT_FOUND" } });
    const reverse = await client.reverseResolveMany([
      "0xZZ",
      (await client.resolve("alice.wallet")).ownerAddress,
    ]);
    expect(reverse.map((r) => r.result)).toEqual([false, true]);
    expect(await client.deepResolveMany([])).toEqual([]);
    const traced = await client.resolveMany(["alice.wallet"], { provenance: "true" });
    expect(traced[0]).toMatchObject({ result: true, data: { provenance: { owner: expect.any(Object) } } });
    const single = await client.resolve("alice.wallet", { provenance: "true" });
    expect(single.provenance?.owner).toEqual((traced[0] as { data: typeof single }).data.provenance?.owner);
  });

  it("iterates the change feed, filtered, and resumes after the last id it saw", async () => {
    const client = createOmninameClient({ baseUrl: server.url, apiKey: key });
    const stop = new AbortController();
    const feed = client.changes({ tlds: "wallet", signal: stop.signal });
    const first = feed.next();
    // The crawler's writes, as a crawler process on the same store would append them.
    const store = await createStore({ dataDir });
    const event = (name: string, tld: string) => ({
      type: "domain.created" as const,
      createdAt: Date.now(),
      sourceId: "fns-polygon",
      network: "POLYGON" as const,
      provider: "NAMESPACE_A" as const,
      tokenId: `0x${name.length.toString(16).padStart(64, "0")}`,
      name,
      tld,
      blockNumber: 7,
      blockHash: `0x${"ab".repeat(32)}`,
      txHash: null,
      blockTime: null,
      retracts: null,
      projectId: null,
      payload: { state: { owner: ALICE, expiresAt: null, records: [] } },
    });
    try {
      // Appended until the stream (opened in the background) has one: it streams from now on.
      let got: Awaited<typeof first> | null = null;
      for (let i = 0; i < 50 && got === null; i++) {
        await store.changeLog.appendChangeEvents([
          event("skipped.eth", "eth"),
          event("fresh.wallet", "wallet"),
        ]);
        got = await Promise.race([first, new Promise<null>((r) => setTimeout(() => r(null), 200))]);
      }
      expect(got?.value).toMatchObject({
        type: "domain.created",
        data: { domain: "fresh.wallet", tld: "wallet" },
      });
      stop.abort();
      expect((await feed.next()).done).toBe(true);
      // Resume from that cursor: the next event after it arrives, the .eth one filtered out.
      await store.changeLog.appendChangeEvents([event("later.eth", "eth"), event("later.wallet", "wallet")]);
      const again = createOmninameClient({ baseUrl: server.url, apiKey: key }).changes({
        tlds: "wallet",
        after: got?.value?.id,
      });
      // After the cursor: the events that follow it (more fresh.wallet ones if the loop above
      // appended several), up to later.wallet, and never an .eth one.
      const seen: string[] = [];
      for await (const e of again) {
        seen.push(e.data.domain);
        if (e.data.domain === "later.wallet" || seen.length > 60) break;
      }
      expect(seen.at(-1)).toBe("later.wallet");
      expect(seen.every((d) => d.endsWith(".wallet"))).toBe(true);
      expect(Number(seen.length)).toBeLessThan(60);
    } finally {
      await store.close();
    }
  });

  it("a feed error (a cursor from the future) is thrown as an OmninameError", async () => {
    const client = createOmninameClient({ baseUrl: server.url, apiKey: key });
    const err = await client
      .changes({ after: "999999999" })
      .next()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "CURSOR_FROM_FUTURE" });
  });

  it("a wrong key is API_KEY_INVALID, and not retried", async () => {
    const client = createOmninameClient({ baseUrl: server.url, apiKey: "on_wrong" });
    await expect(client.resolve("alice.wallet")).rejects.toMatchObject({
      status: 401,
      code: "API_KEY_INVALID",
    });
  });

  it("npm pack gives a package whose README example runs as written", () => {
    execFileSync(join(PACKAGE, "node_modules/.bin/tsc"), ["-p", join(PACKAGE, "tsconfig.json")]);
    const out = mkdtempSync(join(tmpdir(), "omniname-client-pack-"));
    try {
      const tarball = execFileSync(
        "npm",
        ["pack", "--silent", "--ignore-scripts", "--pack-destination", out],
        {
          cwd: PACKAGE,
          encoding: "utf8",
        },
      ).trim();
      const installed = join(out, "node_modules/@omniname/client");
      mkdirSync(installed, { recursive: true });
      execFileSync("tar", ["-xzf", join(out, tarball), "-C", installed, "--strip-components=1"]);
      const listing = execFileSync("tar", ["-tzf", join(out, tarball)], { encoding: "utf8" });
      expect(listing).toContain("package/dist/index.js");
      expect(listing).not.toContain("package/src/");
      // The package's one dependency, as npm would install it beside it.
      for (const dep of ["openapi-fetch", "openapi-typescript-helpers", "eventsource-parser"])
        symlinkSync(join(ROOT, "node_modules", dep), join(out, "node_modules", dep));
      const readme = readFileSync(join(installed, "README.md"), "utf8");
      const example = /## Example\s+```js\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(example).toBeTruthy();
      writeFileSync(join(out, "example.mjs"), example ?? "");
      const printed = execFileSync(process.execPath, [join(out, "example.mjs")], {
        cwd: out,
        encoding: "utf8",
        env: { ...process.env, OMNINAME_URL: server.url, OMNINAME_API_KEY: key },
      });
      expect(printed).toMatch(
        /^alice\.wallet NAMESPACE_\w+ \w+ 0x[0-9a-f]{40}\n\d+ domains hold alice\.wallet\nno such name\n$/,
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("@omniname/client retries", () => {
  it("honours Retry-After on 429, then returns the answer", async () => {
    const s = await scripted([
      { status: 429, headers: { "retry-after": "1" }, body: ERROR_429 },
      { status: 200, body: OK },
    ]);
    try {
      const client = createOmninameClient({ baseUrl: s.url, apiKey: "k" });
      const started = Date.now();
      expect(await client.deepResolve("a.wallet")).toEqual([]);
      expect(s.hits()).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    } finally {
      s.close();
    }
  });

  it("stops after `retries` and throws the last error with its Retry-After", async () => {
    const s = await scripted([{ status: 429, headers: { "retry-after": "0" }, body: ERROR_429 }]);
    try {
      const client = createOmninameClient({ baseUrl: s.url, apiKey: "k", retries: 2 });
      await expect(client.resolve("a.wallet")).rejects.toMatchObject({
        code: "RATE_LIMITED",
        retryAfterMs: 0,
      });
      expect(s.hits()).toBe(3);
    } finally {
      s.close();
    }
  });

  it("does not wait longer than maxRetryDelayMs: a long Retry-After is thrown at once", async () => {
    const s = await scripted([{ status: 429, headers: { "retry-after": "3600" }, body: ERROR_429 }]);
    try {
      const client = createOmninameClient({ baseUrl: s.url, apiKey: "k", maxRetryDelayMs: 5_000 });
      const err = (await client.resolve("a.wallet").catch((e: unknown) => e)) as OmninameError;
      expect(err.retryAfterMs).toBe(3_600_000);
      expect(err.retryable).toBe(true);
      expect(s.hits()).toBe(1);
    } finally {
      s.close();
    }
  });

  it("a body that is not omniname's is UNEXPECTED_RESPONSE, not a crash", async () => {
    const s = await scripted([
      { status: 502, headers: { "content-type": "text/html" }, body: "<h1>bad gateway</h1>" },
    ]);
    try {
      const client = createOmninameClient({ baseUrl: s.url, apiKey: "k" });
      await expect(client.resolve("a.wallet")).rejects.toMatchObject({
        code: "UNEXPECTED_RESPONSE",
        status: 502,
      });
    } finally {
      s.close();
    }
  });

  it("a refused connection is NETWORK_ERROR after the retries", async () => {
    const s = await scripted([{ status: 200, body: OK }]);
    s.close();
    const client = createOmninameClient({ baseUrl: s.url, apiKey: "k", retries: 1 });
    await expect(client.resolve("a.wallet")).rejects.toMatchObject({ code: "NETWORK_ERROR", status: 0 });
  });

  it.each([
    ["120", 120_000],
    ["", undefined],
    ["soon", undefined],
    ["Wed, 21 Oct 2015 07:28:00 GMT", 0],
  ])("reads Retry-After %j", (value, want) => {
    expect(parseRetryAfter(value, Date.parse("2030-01-01T00:00:00Z"))).toBe(want);
  });
});

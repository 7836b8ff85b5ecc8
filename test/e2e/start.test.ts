import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess, stopServerProcess } from "../helpers/server-process.js";

interface Started extends ServerProcess {
  seconds: number;
}

/** `omniname start` as `npm start` runs it, with no chain configured: devnet + crawler + API. */
async function start(dataDir: string): Promise<Started> {
  const began = Date.now();
  const env = { ...process.env, DATA_DIR: dataDir, PORT: "0", LOG_LEVEL: "info", DATABASE_URL: "" };
  const s = await startServerProcess(env, [], 90_000);
  return { ...s, seconds: (Date.now() - began) / 1000 };
}

const stop = stopServerProcess;

describe("omniname start (embedded defaults)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-start-"));
  const running: Started[] = [];
  afterAll(async () => {
    for (const s of running) if (s.child.exitCode === null) s.child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("starts the devnet, crawls it and serves the demo world; a second start resumes", async () => {
    const first = await start(dataDir);
    running.push(first);
    const key = readFileSync(join(dataDir, "demo-api-key"), "utf8").trim();
    expect(first.output()).toContain(`demo API key:   ${key}`);
    expect(first.output()).toContain(
      `curl -s -H 'api-key: ${key}' '${first.url}/svc/api/v1/resolve?domain=alice.wallet'`,
    );

    const res = await fetch(`${first.url}/svc/api/v1/deep-resolve?domain=bob.x`, {
      headers: { "api-key": key },
    });
    const body = (await res.json()) as {
      result: boolean;
      data: Array<{ network: string; provider: string }>;
    };
    expect(res.status).toBe(200);
    expect(body.data.length).toBeGreaterThanOrEqual(2);
    // ENS runs the real contracts: a wrapped name, a subname and a Unicode name of the demo world.
    for (const name of ["alice.eth", "pay.alice.eth", "名前.eth"]) {
      const ens = await fetch(`${first.url}/svc/api/v1/resolve?domain=${encodeURIComponent(name)}`, {
        headers: { "api-key": key },
      });
      expect(ens.status, name).toBe(200);
      expect(((await ens.json()) as { data: { provider: string } }).data.provider, name).toBe("NAMESPACE_C");
    }
    const status = (await (await fetch(`${first.url}/status`)).json()) as {
      data: { sources: Array<{ state: string }> };
    };
    expect(status.data.sources.length).toBe(6);
    expect(status.data.sources.every((s) => s.state === "live")).toBe(true);
    expect(first.output()).not.toContain(readFileSync(join(dataDir, "pepper"), "utf8").trim());

    expect(await stop(first)).toBe(0);

    const second = await start(dataDir);
    running.push(second);
    expect(second.output()).toMatch(/resumed the devnet/);
    const again = await fetch(`${second.url}/svc/api/v1/resolve?domain=alice.wallet`, {
      headers: { "api-key": key },
    });
    expect(again.status).toBe(200);
    expect(await stop(second)).toBe(0);
  }, 180_000);
});

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { childrenOf, hasEnded } from "../helpers/processes.js";
import { type ServerProcess, startServerProcess, stopServerProcess } from "../helpers/server-process.js";

interface Started extends ServerProcess {
  seconds: number;
}

/** `omniname start` as `npm start` runs it, with no chain configured: devnet + crawler + API. */
async function start(dataDir: string, ownGroup = false): Promise<Started> {
  const began = Date.now();
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    LOG_LEVEL: "info",
    DATABASE_URL: "",
    DNS_PORT: "0",
    DNS_WORKERS: "2",
  };
  const s = await startServerProcess(env, [], 90_000, ownGroup);
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
    // Six EVM sources and the SNS source of the devnet's Solana.
    expect(status.data.sources.length).toBe(7);
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

  /**
   * A signal to the whole process group, as Ctrl-C in a terminal or a supervisor's group stop sends
   * it: every process gets it at once. The chains (anvil) used to get it too and end before omniname
   * saved their state ("saving the devnet state failed"); the DNS workers must not be started again.
   */
  async function stopGroup(s: Started, signal: "SIGINT" | "SIGTERM") {
    const pid = s.child.pid as number;
    const children = [...childrenOf(pid, "anvil"), ...childrenOf(pid, "dns-worker")];
    expect(children.length, "4 chains and 2 DNS workers").toBe(6);
    const exited = new Promise<number | null>((resolve) => s.child.once("exit", (code) => resolve(code)));
    process.kill(-pid, signal);
    const code = await exited;
    // Each is ended by the primary before it exits (workers, chains), or by the kernel once it has.
    for (let i = 0; i < 100 && !children.every(hasEnded); i++) await new Promise((r) => setTimeout(r, 100));
    const left = children.filter((c) => !hasEnded(c));
    for (const c of left) process.kill(c, "SIGKILL");
    return { code, left, output: s.output() };
  }

  it("a signal to the whole process group saves the chains, then stops everything; the next start resumes", async () => {
    const groupDir = mkdtempSync(join(tmpdir(), "omniname-start-group-"));
    try {
      const first = await start(groupDir, true);
      running.push(first);
      const ctrlC = await stopGroup(first, "SIGINT");
      expect(ctrlC.output).not.toContain("saving the devnet state failed");
      expect(ctrlC.output).not.toContain("dns worker died");
      expect({ code: ctrlC.code, left: ctrlC.left }).toEqual({ code: 0, left: [] });

      const second = await start(groupDir, true);
      running.push(second);
      expect(second.output()).toMatch(/resumed the devnet/);
      const term = await stopGroup(second, "SIGTERM");
      expect(term.output).not.toContain("saving the devnet state failed");
      expect(term.output).not.toContain("dns worker died");
      expect({ code: term.code, left: term.left }).toEqual({ code: 0, left: [] });
    } finally {
      rmSync(groupDir, { recursive: true, force: true });
    }
  }, 240_000);
});

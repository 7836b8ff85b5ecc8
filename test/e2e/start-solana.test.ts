import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findDevnetManifest } from "../../src/devnet/manifest.js";
import { SNS_WALLETS, snsWallet } from "../../src/devnet/sns-fixtures.js";
import { SNS_WRITE_METHOD } from "../../src/devnet/solana-devnet.js";
import { decodeNameRegistry, decodeReverse, SNS_PROGRAMS } from "../../src/providers/sns/sns-program.js";
import { rpcCall, waitFor } from "../crawler/crawler-harness.js";
import { spawnWithOutput } from "../helpers/processes.js";
import { type ServerProcess, startServerProcess, stopServerProcess } from "../helpers/server-process.js";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;

interface Answer {
  network: string;
  provider: string;
  ownerAddress: string;
  records: Record<string, string>;
  info: { tags: string[] };
}

/** The `.sol` names of the devnet's Solana, read from its reverse lookup accounts. */
async function solNames(rpcUrl: string): Promise<string[]> {
  const accounts = await rpcCall<Array<{ account: { data: [string, string] } }>>(
    rpcUrl,
    "getProgramAccounts",
    [
      SNS_PROGRAMS.nameService,
      { encoding: "base64", filters: [{ memcmp: { offset: 64, bytes: SNS_PROGRAMS.reverseClass } }] },
    ],
  );
  const out: string[] = [];
  for (const a of accounts) {
    const r = decodeNameRegistry(new Uint8Array(Buffer.from(a.account.data[0], "base64")));
    if ("error" in r) continue;
    const label = decodeReverse(r.data);
    if (typeof label === "string" && !label.startsWith("\0")) out.push(`${label}.sol`);
  }
  return out.sort();
}

describe("omniname start with the devnet's Solana", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-start-solana-"));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    LOG_LEVEL: "info",
    DATABASE_URL: "",
    DNS_PORT: "0",
    DNS_WORKERS: "1",
  };
  const running: ServerProcess[] = [];
  afterAll(async () => {
    for (const s of running) if (s.child.exitCode === null) s.child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("serves .sol names, a collision with FNS, simulated changes and /status, and keeps them over a kill -9", async () => {
    let server = await startServerProcess(env, [], 120_000);
    running.push(server);
    const key = readFileSync(join(dataDir, "demo-api-key"), "utf8").trim();
    const get = async <T>(path: string): Promise<{ status: number; data: T }> => {
      const res = await fetch(`${server.url}/svc/api/v1/${path}`, { headers: { "api-key": key } });
      return { status: res.status, data: ((await res.json()) as { data: T }).data };
    };

    // A seeded SNS name.
    const eve = await get<Answer>("resolve?domain=eve.sol");
    expect(eve.status).toBe(200);
    expect(eve.data).toMatchObject({
      network: "SOLANA",
      provider: "NAMESPACE_D",
      ownerAddress: SNS_WALLETS.eve,
      records: { "redirect.WEBSITE.0": "https://eve.example" },
    });

    // alice.sol on FNS (POLYGON) and on SNS: both found, both tagged, one winner first.
    const deep = await get<Answer[]>("deep-resolve?domain=alice.sol");
    expect(deep.status).toBe(200);
    expect(deep.data.map((d) => `${d.provider}/${d.network}`).sort()).toEqual([
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_D/SOLANA",
    ]);
    for (const d of deep.data) expect(d.info.tags).toContain("collision");
    const winner = await get<Answer>("resolve?domain=alice.sol");
    expect(`${winner.data.provider}/${winner.data.network}`).toBe(
      `${deep.data[0].provider}/${deep.data[0].network}`,
    );

    // /status lists the SNS source with its slots.
    const status = (await (await fetch(`${server.url}/status`)).json()) as {
      data: {
        sources: Array<{
          id: string;
          network: string;
          state: string;
          head: number;
          checkpoint: number;
          lag: number;
        }>;
      };
    };
    const sns = status.data.sources.find((s) => s.network === "SOLANA");
    expect(sns).toMatchObject({ id: "sns-solana", state: "live" });
    expect(sns!.checkpoint).toBeGreaterThan(0);
    expect(sns!.head).toBeGreaterThanOrEqual(sns!.checkpoint);
    expect(sns!.lag).toBe(sns!.head - sns!.checkpoint);

    // A change through the devnet's SNS writer, and `devnet simulate` in a process of its own.
    const solana = findDevnetManifest(dataDir)!.networks.SOLANA!;
    const newOwner = snsWallet("e2e-new-owner");
    await rpcCall(solana.rpcUrl, SNS_WRITE_METHOD, ["transfer", "eve.sol", newOwner]);
    const before = await solNames(solana.rpcUrl);
    const sim = spawnWithOutput(
      ["--import", "tsx", MAIN, "devnet", "simulate", "--rate", "20", "--duration", "4"],
      { env },
    );
    const simCode = await new Promise<number | null>((resolve) => sim.child.once("exit", resolve));
    expect(simCode, sim.output()).toBe(0);
    const simulated = (await solNames(solana.rpcUrl)).filter((n) => !before.includes(n));
    expect(simulated.length, sim.output()).toBeGreaterThan(0);
    await waitFor(
      async () => (await get<Answer>("resolve?domain=eve.sol")).data.ownerAddress === newOwner,
      20_000,
      "eve.sol's transfer served",
    );
    for (const name of simulated)
      await waitFor(async () => (await get<Answer>(`resolve?domain=${name}`)).status === 200, 20_000, name);

    // kill -9, as a user would: the next start resumes the ledger with every change.
    const beforeKill = await solNames(solana.rpcUrl);
    const exited = new Promise((r) => server.child.once("exit", r));
    process.kill(server.child.pid!, "SIGKILL");
    await exited;
    server = await startServerProcess(env, [], 120_000);
    running.push(server);
    expect(server.output()).toMatch(/resumed the devnet/);
    expect((await get<Answer>("resolve?domain=eve.sol")).data.ownerAddress).toBe(newOwner);
    for (const name of simulated) {
      const again = await get<Answer>(`resolve?domain=${name}`);
      expect(again.status, name).toBe(200);
      expect(again.data.provider).toBe("NAMESPACE_D");
    }
    expect(await solNames(findDevnetManifest(dataDir)!.networks.SOLANA!.rpcUrl)).toEqual(beforeKill);
    expect(await stopServerProcess(server)).toBe(0);
  }, 360_000);
});

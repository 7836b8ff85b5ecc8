import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Connection } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sns as sdk } from "../../test/judge/sns-sdk.js";
import { domainKeyOf, SNS_PROGRAMS } from "../providers/sns/sns-program.js";
import { randomPortBase } from "./anvil.js";
import { type Devnet, startDevnet } from "./devnet.js";
import type { DevnetManifest } from "./manifest.js";
import { SNS_HOSTILE, SNS_NAMES, SNS_WALLETS, snsWallet } from "./sns-fixtures.js";
import { loadSolanaState, SNS_WRITE_METHOD, saveSolanaState, solanaStatePath } from "./solana-devnet.js";
import { createSolanaLedger } from "./solana-ledger.js";

/** One JSON-RPC call to the devnet's Solana endpoint; the whole answer (result or error). */
async function call(url: string, method: string, params: unknown[] = []) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string } };
}

/** The owner Bonfida's SDK reads for `name` at `url` (its rule: the NFT holder of a tokenized name). */
async function sdkOwner(url: string, name: string): Promise<string | null> {
  const conn = new Connection(url, "confirmed");
  const key = sdk.getDomainKeySync(name.replace(/\.sol$/, "")).pubkey;
  try {
    const { registry, nftOwner } = await sdk.NameRegistryState.retrieve(conn, key);
    return (nftOwner ?? registry.owner).toBase58();
  } catch {
    return null;
  }
}

describe("the devnet's Solana", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-devnet-solana-"));
  const options = () => ({
    dataDir,
    solana: true,
    blockTime: 0,
    basePort: randomPortBase(),
    logs: false,
  });
  let devnet: Devnet | null = null;

  beforeAll(async () => {
    devnet = await startDevnet({ ...options(), networks: ["POLYGON"] });
  }, 240_000);
  afterAll(async () => {
    await devnet?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is listed in devnet.json as networks.SOLANA with its HTTP and WebSocket URLs and the SNS programs", async () => {
    const m = JSON.parse(readFileSync(join(dataDir, "devnet.json"), "utf8")) as DevnetManifest;
    const sol = m.networks.SOLANA!;
    const port = Number(new URL(m.networks.POLYGON!.rpcUrl).port);
    // After the chain's port (no gateway without ETHEREUM).
    expect(sol.rpcUrl).toBe(`http://127.0.0.1:${port + 1}`);
    expect(sol.wsUrl).toBe(`ws://127.0.0.1:${port + 1}`);
    expect(sol.contracts.NAMESPACE_D?.addresses).toEqual({ ...SNS_PROGRAMS });
    expect((await call(sol.rpcUrl, "getGenesisHash")).result).toBe(sol.genesisHash);
    expect(sol.genesisHash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });

  it("holds the seeded .sol names, as Bonfida's SDK reads them, and none of the hostile accounts", async () => {
    const url = devnet!.manifest.networks.SOLANA!.rpcUrl;
    expect(await sdkOwner(url, "alice.sol")).toBe(SNS_WALLETS.alice);
    // bob.sol is tokenized, its NFT held by carol.
    expect(await sdkOwner(url, "bob.sol")).toBe(SNS_WALLETS.carol);
    for (const name of SNS_NAMES.filter((n) => n.split(".").length === 2))
      expect(await sdkOwner(url, name), name).not.toBeNull();
    for (const hostile of [SNS_HOSTILE.short, SNS_HOSTILE.unknownClass, SNS_HOSTILE.badUtf8])
      expect((await call(url, "getAccountInfo", [hostile, { encoding: "base64" }])).result).toMatchObject({
        value: null,
      });
  });

  it("changes names through its write method, and answers bad input with -32602", async () => {
    const url = devnet!.manifest.networks.SOLANA!.rpcUrl;
    const owner = snsWallet("restart-check");
    const slot = (await call(url, SNS_WRITE_METHOD, ["register", "restart-check.sol", owner])).result;
    expect(slot).toBe((await call(url, "getSlot")).result);
    expect(await sdkOwner(url, "restart-check.sol")).toBe(owner);
    // On disk in the same call: a crash now loses nothing a reader saw.
    const saved = loadSolanaState(solanaStatePath(dataDir))!;
    expect(saved.slot).toBe(slot);
    expect(saved.accounts.some((a) => a.address === domainKeyOf("restart-check.sol"))).toBe(true);
    for (const params of [
      ["register", "Not A Name", owner],
      ["register", "x.sol", "0xnot-base58"],
      ["transfer", "nobody-registered-this.sol", owner],
      ["register", "alice.sol", owner],
      ["explode"],
    ]) {
      const answer = await call(url, SNS_WRITE_METHOD, params);
      expect(answer.error?.code, JSON.stringify(params)).toBe(-32602);
    }
  });

  it("keeps changing .sol names under devnet simulate", async () => {
    const before = devnet!.solana!.ledger.slot();
    const sim = await devnet!.simulate({ rate: 30, seed: 7 });
    await new Promise((r) => setTimeout(r, 2_000));
    const report = await sim.stop();
    expect(report.errors, report.lastError ?? "").toBe(0);
    expect(devnet!.solana!.ledger.slot()).toBeGreaterThan(before);
    const simNames = await call(devnet!.manifest.networks.SOLANA!.rpcUrl, "getProgramAccounts", [
      SNS_PROGRAMS.nameService,
      { encoding: "base64", filters: [{ memcmp: { offset: 0, bytes: SNS_PROGRAMS.solRoot } }] },
    ]);
    expect((simNames.result as unknown[]).length).toBeGreaterThan(SNS_NAMES.length);
  });

  it("resumes on a second start with the same ledger: names, slot and genesis hash", async () => {
    const before = devnet!.manifest.networks.SOLANA!;
    const slot = devnet!.solana!.ledger.slot();
    const accounts = devnet!.solana!.ledger.accounts().length;
    await devnet!.stop();
    devnet = await startDevnet({ ...options(), networks: ["POLYGON"] });
    expect(devnet.resumed).toBe(true);
    const after = devnet.manifest.networks.SOLANA!;
    expect(after.genesisHash).toBe(before.genesisHash);
    expect(after.rpcUrl).toBe(before.rpcUrl);
    expect(devnet.solana!.ledger.slot()).toBe(slot);
    expect(devnet.solana!.ledger.accounts()).toHaveLength(accounts);
    expect(await sdkOwner(after.rpcUrl, "restart-check.sol")).toBe(snsWallet("restart-check"));
    expect(await sdkOwner(after.rpcUrl, "alice.sol")).toBe(SNS_WALLETS.alice);
  }, 120_000);

  it("redeploys when the saved ledger is another devnet's (another genesis hash than devnet.json's)", async () => {
    await devnet!.stop();
    const saved = loadSolanaState(solanaStatePath(dataDir))!;
    const other = createSolanaLedger({ ...saved, genesisHash: snsWallet("another devnet") });
    saveSolanaState(solanaStatePath(dataDir), other);
    devnet = await startDevnet({ ...options(), networks: ["POLYGON"] });
    expect(devnet.resumed).toBe(false);
    expect(devnet.manifest.networks.SOLANA!.genesisHash).not.toBe(snsWallet("another devnet"));
    expect(await sdkOwner(devnet.manifest.networks.SOLANA!.rpcUrl, "restart-check.sol")).toBeNull();
  }, 240_000);

  it("starts over when its state file is unreadable", async () => {
    const before = devnet!.manifest.networks.SOLANA!.genesisHash;
    await devnet!.stop();
    writeFileSync(solanaStatePath(dataDir), "not gzip");
    devnet = await startDevnet({ ...options(), networks: ["POLYGON"] });
    expect(devnet.resumed).toBe(false);
    expect(devnet.manifest.networks.SOLANA!.genesisHash).not.toBe(before);
    expect(await sdkOwner(devnet.manifest.networks.SOLANA!.rpcUrl, "alice.sol")).toBe(SNS_WALLETS.alice);
  }, 240_000);
});

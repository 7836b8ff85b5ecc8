import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSolanaLedger } from "../../src/devnet/solana-ledger.js";
import { type SolanaRpc, startSolanaRpc } from "../../src/devnet/solana-rpc.js";
import { SNS_WALLETS, seedSnsWorld } from "../../src/devnet/sns-fixtures.js";
import { createSnsWriter } from "../../src/devnet/sns-writer.js";
import { createStore } from "../../src/store/create-store.js";

const CHILD = join(import.meta.dirname, "crawl-child.ts");

// `omniname crawl --exit-when-synced` with RPC_URL_SOLANA (and no other chain): the SNS source of
// the configuration indexes the Solana endpoint's names into the store, and the command ends.
describe("omniname crawl with RPC_URL_SOLANA", () => {
  let rpc: SolanaRpc;
  const dir = mkdtempSync(join(tmpdir(), "omniname-sns-crawl-"));
  beforeAll(async () => {
    const ledger = createSolanaLedger();
    seedSnsWorld(createSnsWriter(ledger));
    rpc = await startSolanaRpc(ledger);
  });
  afterAll(async () => {
    await rpc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("indexes the Solana Name Service of the configured endpoint", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD, "--exit-when-synced"], {
      env: {
        ...process.env,
        DATA_DIR: dir,
        DATABASE_URL: `sqlite:${join(dir, "sns.db")}`,
        RPC_URL_SOLANA: rpc.url,
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr?.on("data", (c) => {
      err += c;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code, err).toBe(0);
    const store = await createStore({ databaseUrl: `sqlite:${join(dir, "sns.db")}`, dataDir: dir });
    try {
      const [alice] = await store.domainMap.findDomainsByName(["alice.sol"], {
        network: "SOLANA",
        provider: "NAMESPACE_D",
      });
      expect(alice?.owner).toBe(SNS_WALLETS.alice);
      expect(alice?.records.find((r) => r.key === "redirect.WEBSITE.0")?.value).toBe("https://alice.example");
      const [bob] = await store.domainMap.findDomainsByName(["bob.sol"], { network: "SOLANA" });
      expect(bob?.owner).toBe(SNS_WALLETS.carol);
    } finally {
      await store.close();
    }
  });
});

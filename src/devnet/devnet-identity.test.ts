import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { randomPortBase } from "./anvil.js";
import { type Devnet, isManifestLive, startDevnet } from "./devnet.js";

describe("devnet identity", () => {
  const dirA = mkdtempSync(join(tmpdir(), "omniname-devnet-a-"));
  const dirB = mkdtempSync(join(tmpdir(), "omniname-devnet-b-"));
  const running: Devnet[] = [];
  afterAll(async () => {
    for (const d of running) await d.stop();
    rmSync(dirA, { recursive: true, force: true });
    rmSync(dirB, { recursive: true, force: true });
  });

  it("refuses a second start on a DATA_DIR whose devnet still runs, naming its anvil ports", async () => {
    const dir = mkdtempSync(join(tmpdir(), "omniname-devnet-twice-"));
    const opts = {
      dataDir: dir,
      blockTime: 0,
      basePort: randomPortBase(),
      networks: ["POLYGON" as const],
      logs: false,
    };
    const first = await startDevnet(opts);
    try {
      const port = new URL(first.manifest.networks.POLYGON?.rpcUrl ?? "").port;
      await expect(startDevnet(opts)).rejects.toThrow(
        new RegExp(`already running .*ports ${port}: stop those`),
      );
    } finally {
      await first.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("tells its own chains from another devnet's seeded the same way and listening on its ports", async () => {
    const basePort = randomPortBase();
    const start = (dataDir: string) =>
      startDevnet({ dataDir, blockTime: 0, basePort, networks: ["POLYGON"], logs: false }).then((d) => {
        running.push(d);
        return d;
      });
    const a = await start(dirA);
    const manifestA = a.manifest;
    expect(manifestA.networks.POLYGON?.genesisHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await isManifestLive(manifestA)).toBe(true);
    await a.stop();

    // Another DATA_DIR's devnet takes the freed ports: same chain id, same contract addresses.
    const b = await start(dirB);
    expect(b.manifest.networks.POLYGON?.rpcUrl).toBe(manifestA.networks.POLYGON?.rpcUrl);
    expect(b.manifest.networks.POLYGON?.contracts).toEqual(manifestA.networks.POLYGON?.contracts);
    expect(b.manifest.networks.POLYGON?.genesisHash).not.toBe(manifestA.networks.POLYGON?.genesisHash);
    expect(await isManifestLive(manifestA)).toBe(false);

    // So the first DATA_DIR's devnet is not "already running": it resumes its own chains elsewhere.
    const again = await start(dirA);
    expect(again.resumed).toBe(true);
    expect(again.manifest.networks.POLYGON?.rpcUrl).not.toBe(manifestA.networks.POLYGON?.rpcUrl);
    expect(again.manifest.networks.POLYGON?.genesisHash).toBe(manifestA.networks.POLYGON?.genesisHash);
    expect(await isManifestLive(again.manifest)).toBe(true);

    // A manifest that recorded no genesis hash cannot tell: it is not taken as running.
    const { genesisHash: _, ...withoutHash } = again.manifest.networks.POLYGON!;
    expect(await isManifestLive({ ...again.manifest, networks: { POLYGON: withoutHash } })).toBe(false);
  }, 120_000);
});

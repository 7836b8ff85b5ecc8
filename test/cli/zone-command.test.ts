import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore } from "../../src/store/create-store.js";
import { freePort } from "../helpers/free-port.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";

const run = promisify(execFile);
const main = new URL("../../src/main.ts", import.meta.url).pathname;

async function omniname(
  dataDir: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return omninameWith({ DATA_DIR: dataDir, DATABASE_URL: "" }, ...args);
}

async function omninameWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", main, ...args], {
      env: { ...process.env, LOG_LEVEL: "silent", DNS_NAME_SERVERS: "ns.example.net", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("omniname zone export", () => {
  const root = mkdtempSync(join(tmpdir(), "omniname-zone-cli-"));
  const data = join(root, "data");

  beforeAll(async () => {
    const store = await createStore({ databaseUrl: undefined, dataDir: data });
    const add = async (n: number, name: string, provider: "NAMESPACE_A" | "NAMESPACE_B", a: string) => {
      const [sld, tld] = name.split(".");
      const id = await store.domainMap.upsertDomain(
        testDomain({ tokenId: tokenIdOf(n), name, sld, tld, provider }),
      );
      await store.domainMap.replaceRecords(id, [
        { key: "record.A.0", value: a, nativeKey: "record.A.0", nativeValue: a },
      ]);
    };
    await add(1, "alice.wallet", "NAMESPACE_A", "10.0.0.1");
    await add(2, "alice.wallet", "NAMESPACE_B", "10.0.0.2");
    await add(3, "bob.crypto", "NAMESPACE_A", "10.0.0.3");
    const project = await store.projects.createProject({ name: "acme" });
    await store.projects.updateProjectSettings(project.id, { providers: { disabled: ["NAMESPACE_A"] } });
    await store.close();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("writes the TLDs asked for, with the configured name servers", async () => {
    const out = join(root, "public");
    const r = await omniname(data, "zone", "export", "--tld", "wallet", "--out", out);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/wallet\.zone: 1 names, serial 0/);
    expect(existsSync(join(out, "crypto.zone"))).toBe(false);
    const zone = readFileSync(join(out, "wallet.zone"), "utf8");
    expect(zone).toContain("wallet.\t3600\tIN\tNS\tns.example.net.");
    expect(zone).toMatch(/alice\.wallet\.\t300\tIN\tA\t10\.0\.0\.[12]/);
  });

  it("--project applies the project's settings", async () => {
    const out = join(root, "acme");
    const r = await omniname(
      data,
      "zone",
      "export",
      "--project",
      "acme",
      "--tld=wallet,crypto",
      "--out",
      out,
    );
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, "wallet.zone"), "utf8")).toContain("alice.wallet.\t300\tIN\tA\t10.0.0.2");
    // FNS disabled: bob.crypto has no domain left for this project.
    expect(readFileSync(join(out, "crypto.zone"), "utf8")).not.toContain("bob.crypto");
  });

  it("refuses a missing --out (exit 2) and an unknown project (exit 1)", async () => {
    expect((await omniname(data, "zone", "export")).code).toBe(2);
    const r = await omniname(data, "zone", "export", "--project", "nope", "--out", join(root, "x"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no project "nope"/);
  });

  it("with the database unreachable: one line naming STORE_UNAVAILABLE, exit 75 (run it again), no stack", async () => {
    const port = await freePort();
    const r = await omninameWith(
      { DATA_DIR: join(root, "unused"), DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/omniname` },
      ...["zone", "export", "--out", join(root, "unreachable")],
    );
    expect(r.code).toBe(75);
    expect(r.stderr).toBe("omniname: STORE_UNAVAILABLE: The data store is unavailable.\n");
  });
});

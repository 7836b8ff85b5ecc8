import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { API_KEY_PATTERN, hashApiKey } from "../../src/accounts/api-keys.js";
import { createStore } from "../../src/store/create-store.js";

const run = promisify(execFile);
const main = new URL("../../src/main.ts", import.meta.url).pathname;

/** Runs `omniname …` as an operator would, in its own process, with its own DATA_DIR. */
async function omniname(
  dataDir: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", main, ...args], {
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent", DATABASE_URL: "" },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

// Each command is a process of its own that compiles the sources (tsx) and opens the store: ~6 s
// each with another test file beside it, and a test runs several of them.
describe("operator commands", { timeout: 180_000 }, () => {
  const root = mkdtempSync(join(tmpdir(), "omniname-cli-"));
  const a = join(root, "a");
  const b = join(root, "b");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("keys create prints a new key once; the store keeps only its keyed hash", async () => {
    const missing = await omniname(a, "keys", "create", "--project", "acme");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no project named "acme"/);

    const created = await omniname(
      a,
      "keys",
      "create",
      "--project",
      "acme",
      "--create-project",
      "--name",
      "ci",
    );
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(API_KEY_PATTERN);

    const store = await createStore({ dataDir: a });
    try {
      const pepper = readFileSync(join(a, "pepper"), "utf8").trim();
      const found = await store.projects.findApiKeyByHash(hashApiKey(pepper, key));
      expect(found?.name).toBe("ci");
      const rows = await store.accounts.selectFrom("api_keys").selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(key);
    } finally {
      await store.close();
    }

    const listed = await omniname(a, "keys", "list", "--project", "acme");
    expect(listed.stdout).toMatch(/\ton_[0-9a-f]{8}\tci\t.*\tactive/);
    expect(listed.stdout).not.toContain(key);
    const id = listed.stdout.split("\t")[0];
    expect((await omniname(a, "keys", "revoke", "--project", "acme", "--id", id)).code).toBe(0);
    expect((await omniname(a, "keys", "list", "--project", "acme")).stdout).toMatch(/revoked/);
    // The audit log: the project, the key and its revocation, by the CLI, without the key or its hash.
    const audited = await createStore({ dataDir: a });
    try {
      const rows = await audited.accounts.selectFrom("audit_log").selectAll().orderBy("id").execute();
      expect(rows.map((r) => [r.kind, r.actor_type, r.actor_account_id])).toEqual([
        ["project.create", "cli", null],
        ["key.create", "cli", null],
        ["key.revoke", "cli", null],
      ]);
      const hash = (await audited.accounts.selectFrom("api_keys").select("hash").executeTakeFirstOrThrow())
        .hash;
      for (const secret of [key, hash]) expect(JSON.stringify(rows)).not.toContain(secret);
    } finally {
      await audited.close();
    }
    expect((await omniname(a, "keys", "revoke", "--project", "acme", "--id", "999")).code).toBe(1);
    expect((await omniname(a, "keys", "frobnicate")).code).toBe(2);
    // Eight CLI processes, each transpiling the sources with tsx: minutes on a loaded 2-core machine.
  }, 240_000);

  it("keys create takes the console's limits: --endpoints, --networks, --providers, --expires", async () => {
    const dir = join(root, "scoped");
    const past = await omniname(
      dir,
      "keys",
      "create",
      "--project",
      "p",
      "--create-project",
      "--expires",
      "2020-01-01T00:00:00Z",
    );
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/INVALID_PARAMETER: The option --expires is in the past/);
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const created = await omniname(
      dir,
      ...["keys", "create", "--project", "p", "--create-project", "--endpoints", "resolve,batch-resolve"],
      ...["--networks", "matic", "--providers", "NAMESPACE_A", "--expires", expires],
    );
    expect(created.code, created.stderr).toBe(0);
    const store = await createStore({ dataDir: dir });
    try {
      const pepper = readFileSync(join(dir, "pepper"), "utf8").trim();
      const found = await store.projects.findApiKeyByHash(hashApiKey(pepper, created.stdout.trim()));
      expect(found).toMatchObject({
        scopes: {
          endpoints: ["resolve", "batch-resolve"],
          networks: ["POLYGON"],
          providers: ["NAMESPACE_A"],
        },
        expiresAt: Date.parse(expires),
      });
      const audit = await store.accounts
        .selectFrom("audit_log")
        .selectAll()
        .where("kind", "=", "key.create")
        .execute();
      expect(JSON.parse(audit[0].after_value ?? "{}")).toMatchObject({
        endpoints: ["resolve", "batch-resolve"],
        expiresAt: expires,
      });
    } finally {
      await store.close();
    }
  }, 240_000);

  it("snapshot export and import move the map between nodes", async () => {
    const seeded = await createStore({ dataDir: a });
    await seeded.domainMap.upsertDomain({
      provider: "NAMESPACE_B",
      network: "ETHEREUM",
      tokenId: `0x${"ab".repeat(32)}`,
      name: "moved.crypto",
      sld: "moved",
      tld: "crypto",
      owner: "0x00000000000000000000000000000000000a11ce",
      contractAddress: "0x049aba7510f45ba5b64ea9e658e342f904db358d",
      resolver: null,
      registeredAt: 1,
      registeredBlock: 1,
      expiresAt: null,
      lastUpdateBlock: 1,
      lastUpdateAt: 1,
      baseScore: 50,
      spam: false,
      csamOk: true,
      kyc: false,
      tags: [],
    });
    await seeded.close();
    const file = join(root, "map.jsonl");
    const exported = await omniname(a, "snapshot", "export", file);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/"domains":1/);
    const imported = await omniname(b, "snapshot", "import", file);
    expect(imported.code).toBe(0);
    const target = await createStore({ dataDir: b });
    try {
      expect((await target.domainMap.findDomainsByName(["moved.crypto"], {})).map((d) => d.owner)).toEqual([
        "0x00000000000000000000000000000000000a11ce",
      ]);
    } finally {
      await target.close();
    }
    const bad = await omniname(b, "snapshot", "import", join(root, "nope.jsonl"));
    expect(bad.code).not.toBe(0);
    expect((await omniname(b, "snapshot")).code).toBe(2);
  });

  it("stops on an invalid setting and names the variable", async () => {
    const { code, stderr } = await run(
      process.execPath,
      ["--import", "tsx", main, "keys", "list", "--project", "x"],
      {
        env: { ...process.env, DATA_DIR: a, PORT: "not-a-port" },
      },
    ).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/Invalid configuration PORT/);
  });

  it.each(["dnss", "crawlr", "api,dns,"])(
    "start refuses OMNINAME_ROLES=%s: exits 1 naming the variable and the valid roles",
    async (roles) => {
      const { code, stdout, stderr } = await run(process.execPath, ["--import", "tsx", main, "start"], {
        env: { ...process.env, DATA_DIR: a, OMNINAME_ROLES: roles, PORT: "0", DATABASE_URL: "" },
        timeout: 60_000,
      }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(code).toBe(1);
      expect(stderr).toContain(
        `Invalid configuration OMNINAME_ROLES: must be a comma-separated list of all, api, crawler, dns; got ${JSON.stringify(roles)}`,
      );
      expect(stdout).not.toMatch(/starting|omniname is up/);
    },
  );
});

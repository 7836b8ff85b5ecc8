import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { seedDomains } from "../../test/scoring/helpers/seed-fixtures.js";
import { loadConfig } from "../config/load-config.js";
import { shippedTldsPath } from "../scoring/iana-tlds.js";
import { createStore } from "../store/create-store.js";
import type { Store } from "../store/store.js";
import {
  createKycCommand,
  createProjectRulesCommand,
  createScoringCommand,
  createTldsCommand,
} from "./scoring.command.js";

const OWNER = "0x00000000000000000000000000000000000000aa";
const T0 = Date.UTC(2024, 0, 1);

let dir: string;
let store: Store;
let deps: { config: ReturnType<typeof loadConfig>; store: Store };
let stdout: MockInstance;
let stderr: MockInstance;

function printed(spy: MockInstance): string {
  return spy.mock.calls.map((c) => String(c[0])).join("");
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "omniname-cli-scoring-"));
  store = await createStore({ dataDir: dir });
  deps = { config: loadConfig({}, { dataDir: dir }), store };
  await seedDomains(store, [
    {
      provider: "NAMESPACE_A",
      network: "POLYGON",
      name: "alice.wallet",
      owner: OWNER,
      records: [["token.ETH.0", OWNER]],
      registeredAt: T0,
      expiresAt: null,
    },
    {
      provider: "NAMESPACE_B",
      network: "ETHEREUM",
      name: "alice.wallet",
      owner: "0x00000000000000000000000000000000000000bb",
      records: [],
      registeredAt: T0 + 1,
      expiresAt: null,
    },
  ]);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  stdout?.mockRestore();
  stderr?.mockRestore();
  stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
});

async function signals(name: string) {
  return (await store.domainMap.findDomainsByName([name], {})).map((d) => ({
    provider: d.provider,
    kyc: d.kyc,
    tags: d.tags,
    baseScore: d.baseScore,
  }));
}

describe("omniname scoring rescore", () => {
  it("scores the stored domains", async () => {
    expect(await createScoringCommand(deps).run(["rescore"])).toBe(0);
    expect(printed(stdout)).toMatch(/rescored: 2 of 2 domains changed/);
    const [a, b] = await signals("alice.wallet");
    expect(a.tags).toEqual(["origin-provider", "collision"]);
    expect(b.tags).toEqual(["tld-collision:NAMESPACE_A", "collision"]);
  });

  it("refuses an unknown subcommand", async () => {
    expect(await createScoringCommand(deps).run(["nope"])).toBe(2);
  });
});

describe("omniname kyc import", () => {
  it("adds the owners and rescores their domains", async () => {
    const file = join(dir, "kyc.csv");
    writeFileSync(file, `address,name\n${OWNER.toUpperCase().replace("0X", "0x")},Alice\n`);
    expect(await createKycCommand(deps).run(["import", file])).toBe(0);
    expect(printed(stdout)).toMatch(
      /kyc: 1 added, 0 removed, 1 on the list; 1 of 1 affected domains rescored/,
    );
    const [a, b] = await signals("alice.wallet");
    expect(a.kyc).toBe(true);
    expect(b.kyc).toBe(false);
    // The rescoring kept the index-wide signals.
    expect(a.tags).toEqual(["origin-provider", "collision"]);
  });

  it("with --replace removes owners no longer listed", async () => {
    const file = join(dir, "empty-kyc.txt");
    writeFileSync(file, "# nobody\n");
    expect(await createKycCommand(deps).run(["import", file, "--replace"])).toBe(0);
    expect(printed(stdout)).toMatch(/0 added, 1 removed, 0 on the list/);
    expect((await signals("alice.wallet"))[0].kyc).toBe(false);
  });

  it("refuses a file with an invalid address", async () => {
    const file = join(dir, "bad-kyc.txt");
    writeFileSync(file, `${OWNER}\n0xnope\n`);
    await expect(createKycCommand(deps).run(["import", file])).rejects.toThrow(/line 2/);
  });
});

describe("omniname tlds refresh", () => {
  it("installs a new list and rescores: a TLD that enters the ICANN root is tagged", async () => {
    const file = join(dir, "tlds-alpha-by-domain.txt");
    writeFileSync(file, `# Version 2099010100\n${readFileSync(shippedTldsPath(), "utf8")}WALLET\n`);
    expect(await createTldsCommand(deps).run(["refresh", file])).toBe(0);
    expect(printed(stdout)).toMatch(/\(\+1 -0\)/);
    expect(printed(stdout)).toMatch(/added: wallet/);
    for (const d of await signals("alice.wallet")) expect(d.tags).toContain("icann-collision");
    expect(readFileSync(join(dir, "iana-tlds.txt"), "utf8")).toMatch(/^WALLET$/m);
  });

  it("refuses a file that is not the root zone list", async () => {
    const file = join(dir, "tiny.txt");
    writeFileSync(file, "COM\n");
    await expect(createTldsCommand(deps).run(["refresh", file])).rejects.toThrow(/does not look like/);
  });
});

describe("omniname project rules", () => {
  it("sets (normalizing aliases), shows and clears a project's rules", async () => {
    const p = await store.projects.createProject({ name: "acme" });
    const cmd = createProjectRulesCommand(deps);
    expect(
      await cmd.run(["rules", "set", "acme", '{"providerPriority":["ens"],"networks":{"disabled":["bnb"]}}']),
    ).toBe(0);
    expect((await store.projects.findProjectById(p.id))?.settings).toEqual({
      providerPriority: ["NAMESPACE_C"],
      networks: { disabled: ["BSC"] },
    });
    stdout.mockClear();
    expect(await cmd.run(["rules", "show", String(p.id)])).toBe(0);
    expect(JSON.parse(printed(stdout))).toEqual({
      providerPriority: ["NAMESPACE_C"],
      networks: { disabled: ["BSC"] },
    });
    const file = join(dir, "rules.json");
    writeFileSync(file, JSON.stringify({ exceptions: [{ tld: "wallet", provider: "uns" }] }));
    expect(await cmd.run(["rules", "set", "acme", "--file", file])).toBe(0);
    expect((await store.projects.findProjectById(p.id))?.settings).toEqual({
      exceptions: [{ tld: "wallet", provider: "NAMESPACE_B" }],
    });
    expect(await cmd.run(["rules", "clear", "acme"])).toBe(0);
    expect((await store.projects.findProjectById(p.id))?.settings).toEqual({});
  });

  it("refuses invalid rules with the reason and leaves the settings alone", async () => {
    const p = await store.projects.createProject({ name: "strict" });
    await store.projects.updateProjectSettings(p.id, { includeExpired: true });
    expect(
      await createProjectRulesCommand(deps).run([
        "rules",
        "set",
        "strict",
        '{"providers":{"disabled":["NOPE"]}}',
      ]),
    ).toBe(1);
    expect(printed(stderr)).toMatch(/providers.disabled\[0\]: unknown provider "NOPE"/);
    expect((await store.projects.findProjectById(p.id))?.settings).toEqual({ includeExpired: true });
  });

  it("names a missing project", async () => {
    await expect(createProjectRulesCommand(deps).run(["rules", "show", "ghost"])).rejects.toThrow(
      /no project "ghost"/,
    );
  });

  it("prints its usage on a bad invocation", async () => {
    expect(await createProjectRulesCommand(deps).run(["create", "x"])).toBe(2);
    expect(printed(stderr)).toMatch(/usage: omniname project rules show/);
  });
});

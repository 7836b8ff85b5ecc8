import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const BIOME = join(root, "node_modules/@biomejs/cli-linux-x64/biome");

/**
 * [file, import specifier, refused?]: imports point down (docs/architecture.md). Each row is
 * linted with the project's own biome.json, so the rule that `npm test` runs is the one tested.
 */
const ROWS: Array<[string, string, boolean]> = [
  ["src/domain/a.ts", "./names.js", false],
  ["src/domain/a.ts", "../store/store.js", true],
  ["src/domain/a.ts", "../config/config.schema.js", true],
  ["src/domain/a.ts", "../logger.js", true],
  ["src/store/a.ts", "../domain/names.js", false],
  ["src/store/a.ts", "../scoring/scoring-ranker.js", true],
  ["src/store/a.ts", "../providers/provider.js", true],
  ["src/store/a.ts", "../config/config.schema.js", true],
  ["src/store/sqlite/a.ts", "../schema.js", false],
  ["src/store/sqlite/a.ts", "../../crawler/sources.js", true],
  ["src/providers/uns/a.ts", "../../domain/names.js", false],
  ["src/providers/uns/a.ts", "../../store/store.js", true],
  ["src/scoring/rules/a.ts", "../../domain/types.js", false],
  ["src/scoring/rules/a.ts", "../../store/store.js", true],
  ["src/scoring/a.ts", "../resolution/rank.js", true],
  ["src/config/a.ts", "../domain/errors.js", false],
  ["src/config/a.ts", "../logger.js", true],
  ["src/mail/a.ts", "../config/config.schema.js", true],
  ["src/logger.ts", "./config/redact.js", false],
  ["src/logger.ts", "./api/app.js", true],
  ["src/app-context.ts", "./store/store.js", false],
  ["src/app-context.ts", "./resolution/rank.js", true],
  ["src/crawler/a.ts", "../store/store.js", false],
  ["src/crawler/a.ts", "../providers/adapters.js", false],
  ["src/crawler/a.ts", "../config/redact.js", false],
  ["src/crawler/a.ts", "../resolution/resolution.js", true],
  ["src/crawler/a.ts", "../devnet/manifest.js", true],
  ["src/crawler/a.ts", "../api/app.js", true],
  ["src/resolution/a.ts", "../scoring/scoring-ranker.js", false],
  ["src/resolution/a.ts", "../crawler/crawler.js", true],
  ["src/accounts/a.ts", "../mail/mailer.js", false],
  ["src/accounts/a.ts", "../app-context.js", false],
  ["src/accounts/a.ts", "../api/app.js", true],
  ["src/jobs/a.ts", "../scoring/scoring-index.js", false],
  ["src/jobs/a.ts", "../cli/command.js", true],
  ["src/devnet/a.ts", "../crawler/rpc-client.js", false],
  ["src/devnet/a.ts", "../resolution/resolution.js", true],
  ["src/devnet/a.ts", "../cli/command.js", true],
  ["src/net/a.ts", "../domain/errors.js", false],
  ["src/net/a.ts", "../store/store.js", true],
  ["src/domain/a.ts", "../net/address-guard.js", true],
  ["src/resolution/a.ts", "../net/guarded-request.js", false],
  ["src/workers/a.ts", "../accounts/webhooks.repo.js", false],
  ["src/workers/a.ts", "../resolution/rank.js", false],
  ["src/workers/a.ts", "../api/app.js", true],
  ["src/workers/a.ts", "../crawler/crawler.js", true],
  ["src/jobs/a.ts", "../workers/poll-loop.js", true],
  ["src/dns/a.ts", "../workers/poll-loop.js", true],
  ["src/api/a.ts", "../workers/api-workers.js", false],
  ["src/api/routes/a.ts", "../../crawler/crawler.js", false],
  ["src/api/plugins/a.ts", "../../cli/command.js", true],
  ["src/api/a.ts", "../context.js", true],
  ["src/api/a.ts", "../devnet/devnet.js", true],
  ["src/dns/a.ts", "../resolution/resolution.js", false],
  ["src/dns/a.ts", "../cli/command.js", true],
  // DNS-over-HTTPS: the API carries the DNS answers, the DNS server never reaches into the API.
  ["src/api/a.ts", "../dns/query-handler.js", false],
  ["src/dns/a.ts", "../api/app.js", true],
  ["src/context.ts", "./store/create-store.js", false],
  ["src/context.ts", "./cli/commands.js", true],
  ["src/cli/a.ts", "../api/app.js", false],
  ["src/cli/a.ts", "../context.js", false],
  ["src/cli/a.ts", "../devnet/devnet.js", false],
  ["src/cli/a.ts", "../main.js", true],
  // Tests next to the code may use the shared test helpers, whatever their folder is called.
  ["src/resolution/a.test.ts", "../../test/api/helpers/world.js", false],
  // The crawler learns of a devnet only through the sources the command line gives it.
  ["src/crawler/sources.ts", "../devnet/manifest.js", true],
  ["src/crawler/sources.ts", "../devnet/devnet.js", true],
  ["src/crawler/sources.ts", "../api/app.js", true],
  // The console (docs/console.md): app → features → shared modules (api, ui, session, types, …),
  // and nothing outside web/ but the shared package @omniname/wire.
  ["web/src/features/a/components/x.tsx", "../../../ui", false],
  ["web/src/features/a/components/x.tsx", "../../b/components/y", false],
  ["web/src/features/a/components/x.tsx", "@omniname/wire/networks", false],
  ["web/src/features/a/components/x.tsx", "../../../pages/project", true],
  ["web/src/features/a/components/x.tsx", "../../../app", true],
  ["web/src/features/a/components/x.tsx", "../../../../../src/domain/networks", true],
  ["web/src/ui.tsx", "./messages", false],
  ["web/src/ui.tsx", "./features/keys/components/keys-page", true],
  ["web/src/types.ts", "../../src/api/routes/console/console.types", true],
  ["web/src/app.tsx", "./features/projects/components/projects-page", false],
  ["web/src/app.tsx", "../../src/accounts/permissions", true],
  // The shared package imports nothing of the server or the console.
  ["packages/wire/src/a.ts", "./networks.js", false],
  ["packages/wire/src/a.ts", "../../../src/domain/names.js", true],
];

describe("import direction (biome noRestrictedImports, docs/architecture.md)", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-layers-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuses every upward or sideways import of the table, and only those", () => {
    copyFileSync(join(root, "biome.json"), join(dir, "biome.json"));
    const files = new Map<string, string[]>();
    for (const [file, spec] of ROWS) files.set(file, [...(files.get(file) ?? []), spec]);
    for (const [file, specs] of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      // Type-only and value imports alike: one line each, so a diagnostic's line names its row.
      const lines = specs.map((s, i) => `import ${i % 2 ? "type " : ""}{ x${i} } from "${s}";`);
      writeFileSync(
        join(dir, file),
        `${lines.join("\n")}\nexport const all = [${specs.map((_, i) => `x${i}`).join(", ")}];\n`,
      );
    }
    const run = spawnSync(
      BIOME,
      ["lint", "--max-diagnostics=none", "--colors=off", "src", "web", "packages"],
      {
        cwd: dir,
        encoding: "utf8",
      },
    );
    const output = `${run.stdout}${run.stderr}`;
    const refused = new Set(
      [...output.matchAll(/^((?:src|web|packages)\/\S+?):(\d+):\d+ lint\/style\/noRestrictedImports/gm)].map(
        (m) => `${m[1]} ${files.get(m[1] as string)?.[Number(m[2]) - 1]}`,
      ),
    );
    const expected = ROWS.filter(([, , no]) => no).map(([f, s]) => `${f} ${s}`);
    expect([...refused].sort()).toEqual(expected.sort());
    expect(run.status).not.toBe(0);
  });
});

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureDemoProject, generateApiKey } from "../accounts/api-keys.js";
import { buildApp, V1_PREFIX } from "../api/app.js";
import type { AppContext } from "../app-context.js";
import { loadConfig } from "../config/load-config.js";
import { redactConfig } from "../config/redact.js";
import { createContext, type RuntimeContext } from "../context.js";
import { FIXTURE_WORLD } from "../devnet/fixtures.js";
import { importFixtures } from "../devnet/import-fixtures.js";
import { rescoreAll } from "../scoring/rescore.js";
import type { Command } from "./command.js";

/**
 * The demo key of the embedded mode: OMNINAME_DEMO_API_KEY when set, otherwise one generated on
 * first start and kept in DATA_DIR/demo-api-key (mode 0600) so every start can print it. The
 * store only ever holds its keyed hash.
 */
function demoKey(ctx: AppContext): string {
  if (ctx.config.demoApiKey) return ctx.config.demoApiKey;
  const file = join(ctx.config.dataDir, "demo-api-key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const { key } = generateApiKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** Seeds an empty store with the fixture world, so a first `npm start` serves data at once. */
async function ensureData(ctx: RuntimeContext): Promise<void> {
  if ((await ctx.store.countDomains()) > 0) return;
  const started = Date.now();
  const { domains } = await importFixtures(ctx.store, FIXTURE_WORLD);
  // TLD origins, collisions and lookalikes are facts of the whole index: score after the import.
  const { updated } = await rescoreAll(ctx.store, ctx.scoringLists);
  ctx.logger.info(
    { domains, rescored: updated, ms: Date.now() - started },
    "imported the demo world into an empty store",
  );
}

export function banner(url: string, key: string): string {
  const curl = (q: string) => `  curl -s -H 'api-key: ${key}' '${url}${V1_PREFIX}/${q}'`;
  return [
    "",
    `omniname is up: ${url}${V1_PREFIX}`,
    `demo API key:   ${key}`,
    "",
    "try:",
    curl("resolve?domain=alice.wallet"),
    curl("deep-resolve?domain=bob.x"),
    curl("reverse-resolve?walletAddress=0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"),
    "",
  ].join("\n");
}

export const startCommand: Command = {
  name: "start",
  summary: "run omniname: API (and, as they land, crawler and DNS) with the embedded defaults",
  async run() {
    const config = loadConfig();
    const ctx = await createContext(config);
    ctx.logger.info({ config: redactConfig(config as unknown as Record<string, unknown>) }, "starting");
    await ensureData(ctx);
    const key = demoKey(ctx);
    await ensureDemoProject({ ...ctx, config: { ...config, demoApiKey: key } });
    const app = await buildApp(ctx, { console: true });
    const address = await app.listen({ port: config.port, host: config.host });
    process.stdout.write(`${banner(address, key)}\n`);

    return new Promise<number>((resolve) => {
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        ctx.logger.info({ signal }, "shutting down");
        const force = setTimeout(() => resolve(1), 10_000);
        force.unref();
        try {
          await app.close();
          await ctx.store.close();
          resolve(0);
        } catch (e) {
          ctx.logger.error({ err: e }, "shutdown failed");
          resolve(1);
        }
      };
      process.once("SIGTERM", () => void stop("SIGTERM"));
      process.once("SIGINT", () => void stop("SIGINT"));
    });
  },
};

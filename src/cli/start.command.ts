import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import { ensureDemoProject, generateApiKey } from "../accounts/api-keys.js";
import { demoPlanOf, type Plan } from "../accounts/plans.js";
import { buildApp, V1_PREFIX } from "../api/app.js";
import { statusRoutes } from "../api/routes/status.routes.js";
import type { AppContext } from "../app-context.js";
import type { Config } from "../config/config.schema.js";
import { loadConfig, publicUrlFor } from "../config/load-config.js";
import { redactConfig } from "../config/redact.js";
import { createContext, type RuntimeContext } from "../context.js";
import { type Crawler, createCrawler } from "../crawler/crawler.js";
import { createCrawlerMetrics } from "../crawler/crawler-metrics.js";
import { configuredNetworks, finalityOf } from "../crawler/sources.js";
import { type Devnet, startDevnet } from "../devnet/devnet.js";
import { dnsBannerLine, startDnsRole } from "../dns/dns-role.js";
import { FIXTURE_WORLD } from "../devnet/fixtures.js";
import { importFixtures } from "../devnet/import-fixtures.js";
import { createBaseSignalsFn } from "../scoring/base-signals.js";
import { rescoreAll } from "../jobs/rescore.job.js";
import { type ScoringIndex, scoringContext } from "../scoring/scoring-index.js";
import { type Command, parseArgs } from "./command.js";
import { resolveSources, syncOptionsOf } from "./crawl.command.js";

/** How often index-wide scoring facts (TLD origins, collisions, lookalikes) are recomputed. */
const RESCORE_INTERVAL_MS = 60_000;
/** How long start-up waits for the first backfill before it serves anyway. */
const READY_TIMEOUT_MS = 60_000;

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

/**
 * With PORT=0 the port is the one the system chose: a PUBLIC_URL derived from HOST and PORT
 * (not set by the operator) follows it, so links and the console's Origin check use it. The
 * console reads `config.publicUrl` per request and per mail.
 */
function followBoundPort(config: Config, bound: AddressInfo | string | null, logger: Logger): void {
  if (bound === null || typeof bound === "string") return;
  const derived = publicUrlFor(config.host, config.port);
  if (config.publicUrl === derived) config.publicUrl = publicUrlFor(config.host, bound.port);
  logger.info({ address: `${bound.address}:${bound.port}`, publicUrl: config.publicUrl }, "listening");
}

export function parseRoles(value: string): { api: boolean; crawler: boolean; dns: boolean } {
  const roles = new Set(value.split(",").map((r) => r.trim().toLowerCase()));
  const all = roles.has("all");
  return { api: all || roles.has("api"), crawler: all || roles.has("crawler"), dns: all || roles.has("dns") };
}

/** "100,000 requests/s per key, 1,000,000,000 a month (plan demo)": the limits of a plan. */
export function planLimits(plan: Plan): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const rate =
    plan.rateWindowS === 1
      ? `${n(plan.rps)} requests/s per key`
      : `${n(plan.rps * plan.rateWindowS)} requests per ${plan.rateWindowS} s per key`;
  return `${rate}, ${n(plan.monthlyQuota)} a month (plan ${plan.name})`;
}

export function banner(url: string, key: string, plan: Plan): string {
  const curl = (q: string) => `  curl -s -H 'api-key: ${key}' '${url}${V1_PREFIX}/${q}'`;
  return [
    "",
    `omniname is up: ${url}${V1_PREFIX}   (crawler status: ${url}/status)`,
    `demo API key:   ${key}`,
    `demo limits:    ${planLimits(plan)}`,
    "",
    "try:",
    curl("resolve?domain=alice.wallet"),
    curl("deep-resolve?domain=bob.x"),
    curl("reverse-resolve?walletAddress=0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"),
    "",
  ].join("\n");
}

interface CrawlerRole {
  crawler: Crawler;
  devnet: Devnet | null;
  registry: Registry;
  /** Resolves when every source is live (caught up with its head), or after READY_TIMEOUT_MS. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

async function startCrawlerRole(ctx: RuntimeContext, config: Config): Promise<CrawlerRole> {
  const log = ctx.logger.child({ component: "crawler" });
  let devnet: Devnet | null = null;
  if (configuredNetworks(config).length === 0) {
    // Embedded default: no chain configured, so crawl a local devnet seeded with the demo world.
    devnet = await startDevnet({
      dataDir: config.dataDir,
      blockTime: 1,
      log: (m) => log.info(m),
      // A freshly deployed devnet has new block hashes: what was indexed from an earlier one is
      // dropped, before the new manifest is written, so that a crash in between clears it again.
      onFresh: () => ctx.store.clearChainIndex(),
    });
  }
  const chains = devnet;
  const lists = ctx.scoringLists;
  let index: ScoringIndex = (await rescoreAll(ctx.store, lists)).index;
  const registry = new Registry();
  const crawler = createCrawler({
    sources: resolveSources(config),
    store: ctx.store,
    logger: log,
    metrics: createCrawlerMetrics(registry),
    sync: syncOptionsOf(config),
    finalityOf: (s) => finalityOf(config, s.network),
    // The devnet runs in this process group: a crash takes back its unsaved blocks, so the index
    // stays at or below what its state files hold (devnet/state-saver.ts).
    maxHeadOf: chains ? (s) => chains.savedHead(s.network) : undefined,
    signals: createBaseSignalsFn(() => scoringContext(lists, index)),
  });
  crawler.start();

  let rescoring = false;
  const rescore = async () => {
    if (rescoring) return;
    rescoring = true;
    try {
      const r = await rescoreAll(ctx.store, lists);
      index = r.index;
      if (r.updated > 0) log.info({ scanned: r.scanned, updated: r.updated }, "rescored");
    } catch (e) {
      log.error({ err: e }, "rescoring failed");
    } finally {
      rescoring = false;
    }
  };
  const timer = setInterval(() => void rescore(), RESCORE_INTERVAL_MS);
  timer.unref();

  const ready = (async () => {
    const until = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < until) {
      const states = crawler.status().map((s) => s.state);
      if (states.every((s) => s === "live" || s === "halted" || s === "stopped")) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await rescore();
  })();

  return {
    crawler,
    devnet,
    registry,
    ready,
    async stop() {
      clearInterval(timer);
      await crawler.stop();
      await devnet?.stop();
    },
  };
}

export const startCommand: Command = {
  name: "start",
  summary:
    "start [--fixtures]: run the roles of OMNINAME_ROLES (default all: devnet or chains, crawler, API)",
  async run(argv) {
    const { options } = parseArgs(argv, ["fixtures"]);
    const config = loadConfig();
    const roles = parseRoles(config.roles);
    const ctx = await createContext(config);
    ctx.logger.info(
      { config: redactConfig(config as unknown as Record<string, unknown>), roles },
      "starting",
    );

    let role: CrawlerRole | null = null;
    let app: Awaited<ReturnType<typeof buildApp>> | null = null;
    let dns: Awaited<ReturnType<typeof startDnsRole>> | null = null;
    const stopAll = async () => {
      await dns?.close();
      await app?.close();
      await role?.stop();
      await ctx.store.close();
    };
    try {
      if (options.fixtures && (await ctx.store.countDomains()) === 0) {
        // API-only demo without chains: the fixture world written straight into the store.
        await importFixtures(ctx.store, FIXTURE_WORLD);
        await rescoreAll(ctx.store, ctx.scoringLists);
      }
      if (roles.crawler) role = await startCrawlerRole(ctx, config);
      if (roles.dns) dns = await startDnsRole(ctx);
      if (roles.api) {
        const key = demoKey(ctx);
        await ensureDemoProject({ ...ctx, config: { ...config, demoApiKey: key } });
        app = await buildApp(ctx, { console: true, countryHeader: config.geoCountryHeader || undefined });
        await app.register(statusRoutes, {
          store: ctx.store,
          crawler: role?.crawler ?? null,
          registry: role?.registry ?? null,
        });
        const address = await app.listen({ port: config.port, host: config.host });
        followBoundPort(config, app.server.address(), ctx.logger);
        await role?.ready;
        process.stdout.write(`${banner(address, key, demoPlanOf(config))}\n`);
      } else if (role) {
        await role.ready;
        process.stdout.write("omniname crawler is running (OMNINAME_ROLES has no api)\n");
      }
      if (dns) process.stdout.write(`${dnsBannerLine(dns)}\n`);
    } catch (e) {
      await stopAll().catch(() => {});
      throw e;
    }

    return new Promise<number>((resolve) => {
      let stopping = false;
      const stop = async (signal: string) => {
        if (stopping) return;
        stopping = true;
        ctx.logger.info({ signal }, "shutting down");
        const force = setTimeout(() => resolve(1), 30_000);
        force.unref();
        try {
          await stopAll();
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

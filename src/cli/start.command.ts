import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { ensureDemoProject, generateApiKey } from "../accounts/api-keys.js";
import { createConsoleServices } from "../accounts/console-services.js";
import { DEMO_EMAIL, type DemoAccountState, ensureDemoAccount } from "../accounts/demo-account.js";
import { demoPlanOf, type Plan } from "../accounts/plans.js";
import { buildApp, V1_PREFIX } from "../api/app.js";
import { type ApiWorkers, createApiWorkers } from "../workers/api-workers.js";
import { statusRoutes } from "../api/routes/status.routes.js";
import { Registry } from "prom-client";
import type { AppContext } from "../app-context.js";
import type { Config } from "../config/config.schema.js";
import { dataDirSecret } from "../config/data-dir-secret.js";
import { loadConfig, publicUrlFor, schemeOf } from "../config/load-config.js";
import { redactConfig } from "../config/redact.js";
import { createContext } from "../context.js";
import { DNS_ONLY_STORE, type DnsRole, dnsBannerLine, startDnsRole } from "../dns/dns-role.js";
import { fixtureWorld } from "../devnet/fixtures.js";
import { importFixtures } from "../devnet/import-fixtures.js";
import { rescoreAll } from "../jobs/rescore.job.js";
import { type Command, parseArgs } from "./command.js";
import { dnsWorkerCount, startDnsCluster } from "./dns-cluster.js";
import { type CrawlerRole, configuredNetworks, startCrawlerRole } from "./crawler-role.js";
import { ensLiveFor } from "./ens-live.setup.js";
import { findDevnetManifest } from "../devnet/manifest.js";

/**
 * The demo key of the embedded mode: OMNINAME_DEMO_API_KEY when set, otherwise one generated on
 * first start and kept in DATA_DIR/demo-api-key (mode 0600) so every start can print it. The
 * store only ever holds its keyed hash.
 */
function demoKey(ctx: AppContext): string {
  return (
    ctx.config.demoApiKey ?? dataDirSecret(ctx.config.dataDir, "demo-api-key", () => generateApiKey().key)
  );
}

/**
 * With PORT=0 the port is the one the system chose: a PUBLIC_URL derived from HOST and PORT
 * (not set by the operator) follows it, so links and the console's Origin check use it. The
 * console reads `config.publicUrl` per request and per mail.
 */
function followBoundPort(config: Config, bound: AddressInfo | string | null, logger: Logger): void {
  if (bound === null || typeof bound === "string") return;
  const derived = publicUrlFor(config.host, config.port, schemeOf(config));
  if (config.publicUrl === derived)
    config.publicUrl = publicUrlFor(config.host, bound.port, schemeOf(config));
  logger.info({ address: `${bound.address}:${bound.port}`, publicUrl: config.publicUrl }, "listening");
}

function parseRoles(value: string): { api: boolean; crawler: boolean; dns: boolean } {
  const roles = new Set(value.split(",").map((r) => r.trim().toLowerCase()));
  const all = roles.has("all");
  return { api: all || roles.has("api"), crawler: all || roles.has("crawler"), dns: all || roles.has("dns") };
}

/** "100,000 requests/s per key, 1,000,000,000 a month (plan demo)": the limits of a plan. */
function planLimits(plan: Plan): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const rate =
    plan.rateWindowS === 1
      ? `${n(plan.rps)} requests/s per key`
      : `${n(plan.rps * plan.rateWindowS)} requests per ${plan.rateWindowS} s per key`;
  return `${rate}, ${n(plan.monthlyQuota)} a month (plan ${plan.name})`;
}

/**
 * The demo console account is made only with the embedded defaults: SQLite in DATA_DIR (no
 * DATABASE_URL) and no chain configured (the embedded devnet, or --fixtures), unless
 * DEMO_ACCOUNT=false. A shared or production store never gets an account nobody invited.
 */
export function demoAccountEnabled(config: Config): boolean {
  return config.demoAccount && !config.databaseUrl && configuredNetworks(config).length === 0;
}

function demoAccountLines(publicUrl: string, demo: DemoAccountState | null): string[] {
  if (demo === null || demo.kind === "none") return [];
  if (demo.kind === "password-set")
    return [`demo account:   ${DEMO_EMAIL} (sign in with the password you set)`];
  return [
    `demo account:   ${DEMO_EMAIL}: sign in once with this link (15 minutes, single use; each start prints a new one until the account has a password):`,
    `                ${publicUrl}/console/api/auth/one-time-login?token=${demo.token}`,
  ];
}

function banner(
  url: string,
  key: string,
  plan: Plan,
  publicUrl: string,
  demo: DemoAccountState | null,
): string {
  const curl = (q: string) => `  curl -s -H 'api-key: ${key}' '${url}${V1_PREFIX}/${q}'`;
  return [
    "",
    `omniname is up: ${url}${V1_PREFIX}   (crawler status: ${url}/status)`,
    `web console:    ${publicUrl}/console/`,
    ...demoAccountLines(publicUrl, demo),
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

export const startCommand: Command = {
  name: "start",
  summary:
    "start [--fixtures]: run the roles of OMNINAME_ROLES (default all: devnet or chains, crawler, API)",
  async run(argv) {
    const { options } = parseArgs(argv, ["fixtures"]);
    const config = loadConfig();
    const roles = parseRoles(config.roles);
    const dnsOnly = roles.dns && !roles.api && !roles.crawler;
    const ctx = await createContext(config, undefined, dnsOnly ? DNS_ONLY_STORE : undefined);
    ctx.logger.info(
      { config: redactConfig(config as unknown as Record<string, unknown>), roles },
      "starting",
    );

    let role: CrawlerRole | null = null;
    let app: Awaited<ReturnType<typeof buildApp>> | null = null;
    let dns: DnsRole | null = null;
    let workers: ApiWorkers | null = null;
    const stopAll = async () => {
      await dns?.close();
      // The background work first: it uses the services the app closes.
      await workers?.stop();
      await app?.close();
      await role?.stop();
      await ctx.store.close();
    };
    // What says the process is up, written once its signal handlers are in place: a SIGTERM sent
    // on seeing "omniname is up" (a supervisor's, a test's) is a clean stop, not the default kill.
    let ready = "";
    try {
      if (options.fixtures && (await ctx.store.domainMap.countDomains()) === 0) {
        // API-only demo without chains: the fixture world written straight into the store.
        await importFixtures(ctx.store, fixtureWorld());
        await rescoreAll(ctx.store, ctx.scoringLists);
      }
      if (roles.crawler) role = await startCrawlerRole(ctx, { embedDevnet: true, rescore: true });
      // One process per core by default (DNS_WORKERS), each with its own store connections.
      const dnsWorkers = dnsWorkerCount(config);
      if (roles.dns)
        dns =
          dnsWorkers > 1 ? await startDnsCluster(config, ctx.logger, dnsWorkers) : await startDnsRole(ctx);
      if (roles.api) {
        const key = demoKey(ctx);
        const { project: demoProject } = await ensureDemoProject({
          ...ctx,
          config: { ...config, demoApiKey: key },
        });
        const services = createConsoleServices(ctx);
        // One registry for GET /metrics: the crawler's metrics and the API's side by side.
        const registry = role?.registry ?? new Registry();
        // The API role's background work (webhooks, winner.changed): beside the HTTP app, not in it.
        workers = createApiWorkers(ctx, services, { registry });
        const devnetManifest =
          role?.devnet?.manifest ??
          (configuredNetworks(config).length === 0 ? findDevnetManifest(config.dataDir) : null);
        app = await buildApp(ctx, {
          services,
          workers,
          ensLive: ensLiveFor(config, devnetManifest, ctx.logger, registry, ctx.store),
          metricsRegistry: registry,
          closeServices: true,
          countryHeader: config.geoCountryHeader || undefined,
        }).catch(async (e: unknown) => {
          await services.close();
          throw e;
        });
        await app.register(statusRoutes, {
          store: ctx.store,
          // The EVM crawler's sources and the SNS source beside it.
          crawler: role ?? null,
          registry,
        });
        const address = await app.listen({ port: config.port, host: config.host });
        workers.start();
        followBoundPort(config, app.server.address(), ctx.logger);
        await role?.ready;
        const demo = demoAccountEnabled(config)
          ? await ensureDemoAccount(services.accounts, ctx.store, demoProject.id, ctx.clock())
          : null;
        ready += `${banner(address, key, demoPlanOf(config), config.publicUrl, demo)}\n`;
      } else if (role) {
        await role.ready;
        ready += "omniname crawler is running (OMNINAME_ROLES has no api)\n";
      }
      if (dns) ready += `${dnsBannerLine(dns)}\n`;
      if (dns && dnsWorkers > 1) ready += `DNS processes:  ${dnsWorkers} (DNS_WORKERS)\n`;
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
      process.stdout.write(ready);
    });
  },
};

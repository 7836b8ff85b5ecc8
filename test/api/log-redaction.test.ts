import { createServer } from "node:net";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createConsoleServices } from "../../src/accounts/console-services.js";
import type { Config } from "../../src/config/config.schema.js";
import { loadConfig } from "../../src/config/load-config.js";
import { redactConfig, SECRET_CONFIG_KEYS, secretFragmentsOf } from "../../src/config/redact.js";
import { createLogger } from "../../src/logger.js";
import { createTestApp } from "./helpers/test-app.js";

/** Every secret setting of the schema, with credentials wherever its form allows them. */
const SECRETS = {
  DATABASE_URL: "postgres://dbuserQZ:dbpassQZ@db.internal:5432/omniname",
  RPC_URL_ETHEREUM: "https://ethuserQZ:ethpassQZ@eth.example/v3/ethpathkeyQZ0123456789abc?apikey=ethqueryQZ",
  RPC_URL_POLYGON: "https://polytokenQZ@polygon.example/",
  RPC_URL_BSC: "https://bscuserQZ:bscpassQZ@bsc.example/",
  RPC_URL_AURORA: "https://aurora.example/rpc?key=auroraqueryQZ",
  RPC_WS_URL_ETHEREUM: "wss://wsethuserQZ:wsethpassQZ@eth.example/ws/wsethkeyQZ0123456789abc",
  RPC_WS_URL_POLYGON: "wss://wspolytokenQZ@polygon.example/",
  RPC_WS_URL_BSC: "wss://bsc.example/ws?apikey=wsbscqueryQZ",
  RPC_WS_URL_AURORA: "wss://aurora.example/ws?key=wsauroraqueryQZ",
  RPC_URL_SOLANA: "https://soluserQZ:solpassQZ@solana.example/?api-key=solqueryQZ",
  RPC_WS_URL_SOLANA: "wss://solana.example/ws?api-key=wssolqueryQZ",
  SMTP_URL: "smtps://smtpuserQZ:smtppassQZ@mail.example:465",
  REDIS_URL: "redis://redisuserQZ:redispassQZ@127.0.0.1:1",
  API_KEY_PEPPER: "pepperQZ-pepperQZ-pepperQZ",
  OMNINAME_DEMO_API_KEY: "on_demoQZ_demoQZdemoQZdemoQZdemoQZ",
  DNS_TSIG_KEYS:
    "xfrQZ:hmac-sha256:dHNpZ3NlY3JldFFaMTIzNDU2Nzg5MA==,b:hmac-sha256:c2Vjb25kc2VjcmV0UVoxMjM0NTY=",
};
const NEVER_LOGGED = [
  ...Object.values(SECRETS).map((v) => v.replace(/\/$/, "")),
  ..."dbuserQZ dbpassQZ ethuserQZ ethpassQZ ethpathkeyQZ ethqueryQZ polytokenQZ bscuserQZ bscpassQZ auroraqueryQZ wsethuserQZ wsethpassQZ wsethkeyQZ wspolytokenQZ wsbscqueryQZ wsauroraqueryQZ soluserQZ solpassQZ solqueryQZ wssolqueryQZ smtpuserQZ smtppassQZ redisuserQZ redispassQZ pepperQZ demoQZ dHNpZ3NlY3JldFFaMTIzNDU2Nzg5MA== c2Vjb25kc2VjcmV0UVoxMjM0NTY=".split(
    " ",
  ),
];

function sink(): { stream: Writable; text: () => string } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { stream, text: () => lines.join("") };
}

function expectNoSecret(out: string): void {
  for (const s of NEVER_LOGGED) expect(out, s).not.toContain(s);
}

function secretConfig(overrides: Partial<Config> = {}): Config {
  return loadConfig(SECRETS, { dataDir: ".", ...overrides });
}

describe("secrets of the configuration never reach a log", () => {
  it("the test config sets every secret setting of the schema", () => {
    const config = secretConfig() as unknown as Record<string, unknown>;
    expect(SECRET_CONFIG_KEYS.filter((k) => config[k] === undefined)).toEqual([]);
    expect(SECRET_CONFIG_KEYS.length).toBe(Object.keys(SECRETS).length);
  });

  it("through the real logger: the config object, a secret field, a message and an error text", () => {
    const config = secretConfig();
    const s = sink();
    const logger = createLogger(
      "trace",
      s.stream,
      secretFragmentsOf(config as unknown as Record<string, unknown>),
    );
    logger.info({ config }, "config as is");
    logger.info({ config: redactConfig(config as unknown as Record<string, unknown>) }, "config redacted");
    logger.info({ redisUrl: config.redisUrl, smtpUrl: config.smtpUrl }, "top-level secret fields");
    logger.info({ a: { b: { c: { rpc: config.rpcUrlEthereum } } } }, "a field no path names");
    logger.warn(`connecting to ${config.databaseUrl} and ${config.rpcUrlPolygon}`);
    // One TSIG secret on its own, as a transfer's error text could carry it.
    logger.warn(`tsig ${config.dnsTsigKeys?.split(",")[0].split(":")[2]}`);
    const err = Object.assign(new Error(`cannot reach ${config.rpcUrlBsc} (${config.rpcUrlAurora})`), {
      config,
    });
    logger.error({ err }, "an error carrying the config");
    const out = s.text();
    expectNoSecret(out);
    // Redacted, not dropped: the hosts stay readable.
    expect(out).toContain("eth.example");
    expect(out).toContain("mail.example");
  });

  it("through the app: an error answered 500 and request headers logged by a hook", async () => {
    const config = secretConfig();
    const s = sink();
    const logger = createLogger(
      "trace",
      s.stream,
      secretFragmentsOf(config as unknown as Record<string, unknown>),
    );
    const t = await createTestApp({
      logger,
      beforeReady: (app) => {
        app.get("/boom", async (request) => {
          request.log.info({ headers: request.headers }, "headers");
          throw Object.assign(new Error(`redis at ${config.redisUrl} refused`), { config });
        });
      },
    });
    try {
      const res = await t.app.inject({ url: "/boom", headers: { "x-upstream": config.smtpUrl as string } });
      expect(res.statusCode).toBe(500);
      expect(res.body).not.toContain("redis");
    } finally {
      await t.close();
    }
    const out = s.text();
    expect(out).toContain("request failed");
    expectNoSecret(out);
  });

  it("through an error path: the limits' Redis that cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const config = secretConfig({ redisUrl: `redis://redisuserQZ:redispassQZ@127.0.0.1:${port}` });
    const s = sink();
    const logger = createLogger(
      "trace",
      s.stream,
      secretFragmentsOf(config as unknown as Record<string, unknown>),
    );
    const t = await createTestApp();
    const services = createConsoleServices({ ...t.ctx, config, logger });
    try {
      while (!s.text().includes("redis error")) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await services.close();
      await t.close();
    }
    expectNoSecret(s.text());
  });

  it("through a configuration error: the invalid secret value is not repeated", () => {
    const s = sink();
    const logger = createLogger("trace", s.stream);
    try {
      loadConfig({ REDIS_URL: "http://redisuserQZ:redispassQZ@cache.example:6379" });
      expect.unreachable();
    } catch (err) {
      logger.fatal({ err }, "invalid configuration");
    }
    const out = s.text();
    expect(out).toContain("REDIS_URL");
    expectNoSecret(out);
  });
});

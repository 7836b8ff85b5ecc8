import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import pino from "pino";
import { SMTPServer } from "smtp-server";
import {
  type ConsoleServices,
  type ConsoleServicesOptions,
  createConsoleServices,
} from "../../../src/accounts/console-services.js";
import { Registry } from "prom-client";
import { buildApp } from "../../../src/api/app.js";
import { type ApiWorkersOptions, createApiWorkers } from "../../../src/workers/api-workers.js";
import type { AppContext } from "../../../src/app-context.js";
import type { Config } from "../../../src/config/config.schema.js";
import { loadConfig } from "../../../src/config/load-config.js";
import { LOG_REDACTION } from "../../../src/logger.js";
import { createScoringRanker } from "../../../src/resolution/rank.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { createTestDatabase } from "../../helpers/pg.js";

export const API = "/console/api";
export const V1 = "/svc/api/v1";
export const PUBLIC_URL = "http://console.test";
/** Plans of the tests: small numbers so limits are reachable. */
const TEST_PLANS = {
  free: { rps: 1000, monthlyQuota: 1_000_000, maxProjects: 5, maxKeys: 5, maxMembers: 10 },
  tiny: { rps: 10, rateWindowS: 10, monthlyQuota: 1000, maxProjects: 1, maxKeys: 2, maxMembers: 3 },
  metered: { rps: 1000, monthlyQuota: 25, maxProjects: 5, maxKeys: 5, maxMembers: 5 },
};

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** A real SMTP server on a free loopback port that keeps what it receives. */
export async function startSmtpSink() {
  const mails: Mail[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push(parseMail(Buffer.concat(chunks).toString("utf8")));
        for (const w of waiters.splice(0)) w();
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** The newest mail to `to` whose subject matches, waiting for it up to 5 s. */
    async waitFor(to: string, subject: RegExp, after = 0): Promise<Mail> {
      const deadline = Date.now() + 5000;
      for (;;) {
        const m = mails
          .slice(after)
          .filter((x) => x.to === to && subject.test(x.subject))
          .at(-1);
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function decodeQuotedPrintable(s: string): string {
  return s
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
}

function parseMail(raw: string): Mail {
  const split = raw.indexOf("\r\n\r\n") >= 0 ? raw.indexOf("\r\n\r\n") : raw.indexOf("\n\n");
  const head = raw.slice(0, split).replace(/\r?\n[ \t]+/g, " ");
  let body = raw.slice(split).trim();
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "im").exec(head)?.[1]?.trim() ?? "";
  if (/quoted-printable/i.test(header("Content-Transfer-Encoding"))) body = decodeQuotedPrintable(body);
  if (/base64/i.test(header("Content-Transfer-Encoding")))
    body = Buffer.from(body, "base64").toString("utf8");
  const to = header("To").replace(/^.*<([^>]+)>.*$/, "$1");
  return { to, subject: header("Subject"), text: body };
}

/** The token of the first console link in a mail. */
export function tokenOf(mail: Mail): string {
  const m = /\/console\/[a-z-]+\?token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error(`no link in mail: ${mail.text}`);
  return m[1];
}

export interface ConsoleTestApp {
  app: FastifyInstance;
  ctx: AppContext;
  store: Store;
  services: ConsoleServices;
  smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  /** Every log line written while the app ran (level debug and up). */
  logs: string[];
  /** The test clock (epoch ms); advance it to expire tokens and sessions. */
  clock: { now: number };
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The whole HTTP app (v1 + console) over a real store (SQLite in a temp dir, or a private
 * PostgreSQL database), a real SMTP sink, and a logger whose output the test can read.
 */
export async function createConsoleTestApp(
  opts: {
    backend?: "sqlite" | "postgres";
    config?: Partial<Config>;
    services?: ConsoleServicesOptions;
    /** The built web console served at /console/ (a temp dir with a fake index.html in tests). */
    consoleDistDir?: string;
    /** The background work's options (the webhook deliverer's among them), started as `start` does. */
    webhooks?: ApiWorkersOptions;
  } = {},
): Promise<ConsoleTestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-console-"));
  let store: Store;
  let dropDb = async () => {};
  if (opts.backend === "postgres") {
    const db = await createTestDatabase();
    store = await createStore({ databaseUrl: db.url, dataDir });
    dropDb = db.drop;
  } else {
    store = await createStore({ databaseUrl: undefined, dataDir });
  }
  const smtp = await startSmtpSink();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const logger = pino({ level: "debug", redact: LOG_REDACTION }, sink);
  const clock = { now: Date.UTC(2026, 10, 21, 12) };
  const config = loadConfig(
    {},
    {
      dataDir,
      publicUrl: PUBLIC_URL,
      smtpUrl: smtp.url,
      plans: TEST_PLANS,
      defaultPlan: "free",
      ...opts.config,
    },
  );
  const ctx: AppContext = {
    config,
    logger,
    store,
    ranker: createScoringRanker(),
    pepper: randomBytes(24).toString("hex"),
    clock: () => clock.now,
  };
  await seedDomain(store, clock.now);
  const services = createConsoleServices(ctx, opts.services);
  const registry = new Registry();
  const workers = createApiWorkers(ctx, services, { ...opts.webhooks, registry });
  const app = await buildApp(ctx, {
    services,
    consoleDistDir: opts.consoleDistDir,
    workers,
    metricsRegistry: registry,
  });
  await app.ready();
  workers.start();
  return {
    app,
    ctx,
    store,
    services,
    smtp,
    logs,
    clock,
    dataDir,
    async close() {
      await workers.stop();
      await app.close();
      await services.close();
      await smtp.close();
      await store.close().catch(() => {});
      await dropDb();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One resolvable name, so that v1 calls answer 200. */
async function seedDomain(store: Store, now: number): Promise<void> {
  const id = await store.domainMap.upsertDomain({
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: `0x${"ab".repeat(32)}`,
    name: "alice.wallet",
    sld: "alice",
    tld: "wallet",
    owner: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    resolver: null,
    registeredAt: now - 86_400_000,
    registeredBlock: 1,
    expiresAt: null,
    lastUpdateBlock: 1,
    lastUpdateAt: now - 86_400_000,
    baseScore: 70,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
  });
  await store.domainMap.replaceRecords(id, [
    {
      key: "token.ETH.0",
      value: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      nativeKey: "token.ETH.0",
      nativeValue: "x",
    },
  ]);
}

type Res = LightMyRequestResponse;

/**
 * A browser's view of the console: a cookie jar and the CSRF token it got from the API, sent
 * back on every state-changing request as the console page would.
 */
export class Agent {
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;

  constructor(
    private readonly app: FastifyInstance,
    readonly remoteAddress = "127.0.0.1",
  ) {}

  private keep(res: Res): void {
    const raw = res.headers["set-cookie"];
    for (const c of raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) {
      const [pair, ...attrs] = c.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    method: string,
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Res> {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size > 0) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    if (method !== "GET" && this.csrf !== null && h["x-csrf-token"] === undefined)
      h["x-csrf-token"] = this.csrf;
    const res = await this.app.inject({
      method: method as "GET",
      url: url.startsWith("/") ? url : `${API}/${url}`,
      headers: h,
      remoteAddress: this.remoteAddress,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    this.keep(res);
    const token = res.headers["content-type"]?.toString().includes("json")
      ? (res.json()?.data?.csrfToken as unknown)
      : undefined;
    if (typeof token === "string") this.csrf = token;
    return res;
  }

  get = (url: string) => this.request("GET", url);
  post = (url: string, body: unknown = {}) => this.request("POST", url, body);
  put = (url: string, body: unknown) => this.request("PUT", url, body);
  patch = (url: string, body: unknown) => this.request("PATCH", url, body);
  delete = (url: string) => this.request("DELETE", url);

  /** Fetches a pre-session CSRF token (GET /csrf), as the console page does first. */
  async start(): Promise<this> {
    await this.get("csrf");
    return this;
  }
}

export const PASSWORD = "correct horse battery staple";

/**
 * An operator invitation, registration, the verification link read from the SMTP sink, and a
 * login: a signed-in agent.
 */
export async function signUp(
  t: ConsoleTestApp,
  email: string,
  fullName = "Test User",
  remoteAddress?: string,
): Promise<Agent> {
  const { link } = await t.services.accounts.invite(email, { wait: true });
  const invitationToken = new URL(link).searchParams.get("token")!;
  const agent = await new Agent(t.app, remoteAddress).start();
  const reg = await agent.post("auth/register", {
    invitationToken,
    fullName,
    email,
    password: PASSWORD,
    acceptTerms: true,
  });
  if (reg.statusCode !== 201) throw new Error(`register ${email}: ${reg.statusCode} ${reg.body}`);
  const mail = await t.smtp.waitFor(email, /Verify/);
  const v = await agent.post("auth/verify-email", { token: tokenOf(mail) });
  if (v.statusCode !== 200) throw new Error(`verify ${email}: ${v.statusCode} ${v.body}`);
  const login = await agent.post("auth/login", { email, password: PASSWORD });
  if (login.statusCode !== 200) throw new Error(`login ${email}: ${login.statusCode} ${login.body}`);
  return agent;
}

export function uniqueEmail(tag: string): string {
  return `${tag}-${randomBytes(4).toString("hex")}@example.test`;
}

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSmtpSink } from "../console/helpers/console-app.js";
import { freePort } from "../helpers/free-port.js";

const main = new URL("../../src/main.ts", import.meta.url).pathname;
const run = promisify(execFile);

interface Answer {
  data?: { id?: number; csrfToken?: string };
  error?: { code: string };
}

/** A browser of one origin: keeps cookies, sends Origin on every request. */
class Browser {
  private readonly cookies = new Map<string, string>();
  csrf = "";
  constructor(
    private readonly base: string,
    private readonly origin: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Answer }> {
    const headers: Record<string, string> = { origin: this.origin };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    if (method !== "GET") headers["x-csrf-token"] = this.csrf;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${this.base}/console/api/${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const eq = pair.indexOf("=");
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const json = (await res.json()) as Answer;
    if (typeof json?.data?.csrfToken === "string") this.csrf = json.data.csrfToken;
    return { status: res.status, json };
  }
}

const PASSWORD = "violet kettle orbit 2931";

describe("omniname start without PUBLIC_URL on a free PORT", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-public-url-"));
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let child: ChildProcess | null = null;
  let port = 0;
  let output = "";
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    smtp = await startSmtpSink();
    port = await freePort();
    env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), SMTP_URL: smtp.url, DATABASE_URL: "" };
    delete env.PUBLIC_URL;
    delete env.HOST;
    child = spawn(process.execPath, ["--import", "tsx", main, "start", "--fixtures"], {
      env: { ...env, OMNINAME_ROLES: "api", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d) => {
      output += d;
    });
    child.stderr?.on("data", (d) => {
      output += d;
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}:\n${output}`);
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error(`not up in 60 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
    await smtp?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("logs, links and checks the console's Origin with the bound port", async () => {
    const origin = `http://127.0.0.1:${port}`;
    expect(output).toMatch(new RegExp(`"publicUrl":"${origin}/?"`));
    expect(output).not.toContain("127.0.0.1:8080");

    // The operator's invitation, from its own process with the same environment.
    const email = `partner-${port}@example.test`;
    const invited = await run(process.execPath, ["--import", "tsx", main, "admin", "invite", email], {
      env: { ...env, LOG_LEVEL: "silent" },
    });
    const link = /https?:\/\/\S+/.exec(invited.stdout)?.[0] ?? "";
    expect(link.startsWith(`${origin}/console/register?token=`), link).toBe(true);
    const mail = await smtp.waitFor(email, /invitation/i);
    expect(mail.text).toContain(link);
    expect((await fetch(link)).status).toBe(200);

    // A browser on that origin registers, verifies and signs in: the CSRF Origin check passes.
    const browser = new Browser(origin, origin);
    await browser.call("GET", "csrf");
    const token = new URL(link).searchParams.get("token");
    const reg = await browser.call("POST", "auth/register", {
      invitationToken: token,
      fullName: "Port Partner",
      email,
      password: PASSWORD,
      acceptTerms: true,
    });
    expect(reg.status, JSON.stringify(reg.json)).toBe(201);
    const verifyMail = await smtp.waitFor(email, /Verify/);
    const verifyLink = /https?:\/\/\S+/.exec(verifyMail.text)?.[0] ?? "";
    expect(verifyLink.startsWith(`${origin}/console/verify-email?token=`), verifyLink).toBe(true);
    const verified = await browser.call("POST", "auth/verify-email", {
      token: new URL(verifyLink).searchParams.get("token"),
    });
    expect(verified.status, JSON.stringify(verified.json)).toBe(200);
    const login = await browser.call("POST", "auth/login", { email, password: PASSWORD });
    expect(login.status, JSON.stringify(login.json)).toBe(200);

    // The server's own invitation mail (a project admin adds an address) links to the port too.
    const project = await browser.call("POST", "projects", { name: `port ${port}` });
    expect(project.status, JSON.stringify(project.json)).toBe(201);
    const invitee = `invitee-${port}@example.test`;
    const added = await browser.call("POST", `projects/${project.json.data?.id}/members`, {
      email: invitee,
      role: "viewer",
    });
    expect(added.status, JSON.stringify(added.json)).toBe(202);
    const teamMail = await smtp.waitFor(invitee, /invited/);
    expect(teamMail.text).toContain(`${origin}/console/register?token=`);

    // A foreign origin is still refused.
    const foreign = new Browser(origin, "http://127.0.0.1:8080");
    await foreign.call("GET", "csrf");
    const refused = await foreign.call("POST", "auth/login", { email, password: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe("CSRF_REJECTED");
  }, 60_000);
});

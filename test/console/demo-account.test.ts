import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_EMAIL, ensureDemoAccount } from "../../src/accounts/demo-account.js";
import { publicAccount } from "../../src/accounts/accounts.repo.js";
import { hashPassword } from "../../src/accounts/password.js";
import { demoAccountEnabled } from "../../src/cli/start.command.js";
import { loadConfig } from "../../src/config/load-config.js";
import {
  apiRoleEnv,
  type ServerProcess,
  startServerProcess,
  stopServerProcess,
} from "../helpers/server-process.js";
import { createAccount } from "./helpers/accounts.js";
import { API, type ConsoleTestApp, createConsoleTestApp, PASSWORD } from "./helpers/console-app.js";

const LINK = /(http:\/\/\S+\/console\/api\/auth\/one-time-login\?token=([A-Za-z0-9_-]+))/;

describe("the demo account is only for the embedded defaults", () => {
  it("is enabled without DATABASE_URL and RPC URLs, and not with either, nor with DEMO_ACCOUNT=false", () => {
    expect(demoAccountEnabled(loadConfig({}))).toBe(true);
    expect(demoAccountEnabled(loadConfig({ DATABASE_URL: "postgres://u@127.0.0.1/x" }))).toBe(false);
    expect(demoAccountEnabled(loadConfig({ RPC_URL_ETHEREUM: "http://127.0.0.1:1" }))).toBe(false);
    expect(demoAccountEnabled(loadConfig({ DEMO_ACCOUNT: "false" }))).toBe(false);
    expect(demoAccountEnabled(loadConfig({ DEMO_ACCOUNT: "0" }))).toBe(false);
    expect(() => loadConfig({ DEMO_ACCOUNT: "maybe" })).toThrow(/DEMO_ACCOUNT/);
  });
});

describe.each(["sqlite", "postgres"] as const)(
  "demo account and its one-time sign-in link on %s",
  (backend) => {
    let t: ConsoleTestApp;
    let projectId: number;
    const open = (token: string, headers: Record<string, string> = {}) =>
      t.app.inject({ url: `${API}/auth/one-time-login?token=${token}`, headers });

    beforeAll(async () => {
      t = await createConsoleTestApp({ backend });
      projectId = (await t.store.projects.createProject({ name: "demo", plan: "free" })).id;
    });
    afterAll(async () => {
      await t?.close();
    });

    it("is made in an empty store: verified, owner of the demo project, no password", async () => {
      const demo = await ensureDemoAccount(t.services.accounts, t.store, projectId, t.clock.now);
      expect(demo.kind).toBe("link");
      const a = await t.services.accounts.repo.findAccountByEmail(DEMO_EMAIL);
      expect(a?.emailVerified).toBe(true);
      expect(await t.services.projects.repo.findRole(projectId, a!.id)).toBe("owner");
      // No password signs it in.
      for (const password of [PASSWORD, "", a!.passwordHash]) {
        const res = await t.app.inject({
          method: "POST",
          url: `${API}/auth/login`,
          payload: { email: DEMO_EMAIL, password: password || "x" },
        });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
      }
    });

    it("signs in once (303 to the project, with the session cookie); a second use is a clear 400", async () => {
      const demo = await ensureDemoAccount(t.services.accounts, t.store, projectId, t.clock.now);
      if (demo.kind !== "link") throw new Error(demo.kind);
      const first = await open(demo.token);
      expect(first.statusCode).toBe(303);
      expect(first.headers.location).toBe(`/console/projects/${projectId}`);
      const cookie = String(first.headers["set-cookie"]).split(";")[0];
      expect(cookie).toMatch(/^omniname_session=/);
      const me = await t.app.inject({ url: `${API}/account`, headers: { cookie } });
      expect(me.statusCode).toBe(200);
      expect(me.json().data.account.email).toBe(DEMO_EMAIL);
      // The console tells it to set a password rather than asking for its current one.
      expect(me.json().data.account.hasPassword).toBe(false);
      const projects = await t.app.inject({ url: `${API}/projects`, headers: { cookie } });
      expect(projects.json().data).toEqual([expect.objectContaining({ id: projectId, role: "owner" })]);

      const again = await open(demo.token);
      expect(again.statusCode).toBe(400);
      expect(again.headers["content-type"]).toMatch(/^text\/plain/);
      expect(again.body).toMatch(/already used or has expired/);
      expect(again.body).toContain(`${t.ctx.config.publicUrl}/console/`);
      expect(again.headers["set-cookie"]).toBeUndefined();
      const json = await open(demo.token, { accept: "application/json" });
      expect(json.statusCode).toBe(400);
      expect(json.json().error.code).toBe("TOKEN_INVALID");
    });

    it("a new link voids the older one; a link expires after 15 minutes", async () => {
      const older = await ensureDemoAccount(t.services.accounts, t.store, projectId, t.clock.now);
      const newer = await ensureDemoAccount(t.services.accounts, t.store, projectId, t.clock.now);
      if (older.kind !== "link" || newer.kind !== "link") throw new Error("no link");
      expect(newer.token).not.toBe(older.token);
      expect((await open(older.token)).statusCode).toBe(400);
      t.clock.now += 15 * 60_000 + 1;
      const late = await open(newer.token);
      expect(late.statusCode).toBe(400);
      expect(late.body).toMatch(/already used or has expired/);
    });

    it("refuses missing and malformed tokens with a 4xx, never a 5xx", async () => {
      for (const q of [
        "",
        "?token=",
        "?token=%00",
        `?token=${"a".repeat(500)}`,
        "?token=../../x",
        "?token[]=a",
      ]) {
        const res = await t.app.inject({ url: `${API}/auth/one-time-login${q}` });
        expect(res.statusCode, `${q}: ${res.body}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode, q).toBeLessThan(500);
      }
    });

    it("once a password is set, no link is made any more", async () => {
      const a = await t.services.accounts.repo.findAccountByEmail(DEMO_EMAIL);
      await t.services.accounts.repo.setPasswordHash(a!.id, await hashPassword(PASSWORD), t.clock.now);
      expect((await ensureDemoAccount(t.services.accounts, t.store, projectId, t.clock.now)).kind).toBe(
        "password-set",
      );
      expect(
        publicAccount((await t.services.accounts.repo.findAccountByEmail(DEMO_EMAIL))!).hasPassword,
      ).toBe(true);
    });

    it("is not made in a store that has console accounts", async () => {
      const other = await createConsoleTestApp({ backend });
      try {
        await createAccount(other, "someone");
        const p = await other.store.projects.createProject({ name: "demo", plan: "free" });
        expect(
          (await ensureDemoAccount(other.services.accounts, other.store, p.id, other.clock.now)).kind,
        ).toBe("none");
        expect(await other.services.accounts.repo.findAccountByEmail(DEMO_EMAIL)).toBeNull();
      } finally {
        await other.close();
      }
    });
  },
);

describe("omniname start prints the console and a one-time sign-in link", () => {
  const dirs: string[] = [];
  const running: ServerProcess[] = [];
  afterAll(async () => {
    for (const s of running) if (s.child.exitCode === null) s.child.kill("SIGKILL");
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const start = async (dataDir: string, extra: Record<string, string> = {}) => {
    const s = await startServerProcess(apiRoleEnv(dataDir, { DATABASE_URL: "", ...extra }), ["--fixtures"]);
    running.push(s);
    return s;
  };

  it("creates the demo account on the first start; each start prints a fresh link until a password is set", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "omniname-demo-"));
    dirs.push(dataDir);
    const first = await start(dataDir);
    expect(first.output()).toContain(`web console:    ${first.url}/console/`);
    expect(first.output()).toContain(`demo account:   ${DEMO_EMAIL}`);
    const [, link] = LINK.exec(first.output()) ?? [];
    expect(link?.startsWith(`${first.url}/console/api/auth/one-time-login?token=`)).toBe(true);
    const signIn = await fetch(link, { redirect: "manual" });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("location")).toMatch(/^\/console\/projects\/\d+$/);
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
    const projectUrl = `${first.url}/console/api${signIn.headers.get("location")!.replace("/console", "")}`;
    const project = await fetch(projectUrl, { headers: { cookie } });
    expect(project.status).toBe(200);
    expect((await project.json()).data).toMatchObject({ name: "demo", role: "owner" });
    const reused = await fetch(link, { redirect: "manual" });
    expect(reused.status).toBe(400);
    expect(await reused.text()).toMatch(/already used or has expired/);
    expect(await stopServerProcess(first)).toBe(0);

    const second = await start(dataDir);
    const [, again] = LINK.exec(second.output()) ?? [];
    expect(again).toBeDefined();
    expect(again).not.toBe(link);
    expect((await fetch(again, { redirect: "manual" })).status).toBe(303);
    expect(await stopServerProcess(second)).toBe(0);
  }, 120_000);

  it("with DEMO_ACCOUNT=false: the console URL, no demo account", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "omniname-demo-"));
    dirs.push(dataDir);
    const s = await start(dataDir, { DEMO_ACCOUNT: "false" });
    expect(s.output()).toContain("web console:");
    expect(s.output()).not.toContain("demo account:");
    expect(s.output()).not.toMatch(LINK);
    expect(await stopServerProcess(s)).toBe(0);
  }, 120_000);
});

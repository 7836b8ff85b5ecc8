import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCommand, runAdmin } from "../../src/cli/admin.command.js";
import { createAccount, createProject } from "./helpers/accounts.js";
import { type ConsoleTestApp, createConsoleTestApp, tokenOf, V1 } from "./helpers/console-app.js";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s) } };
}

describe("omniname admin", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("invites by e-mail over SMTP and prints the single-use link", async () => {
    const o = io();
    expect(await runAdmin(t.ctx, ["invite", "New.Partner@Example.test"], o.io)).toBe(0);
    const mail = await t.smtp.waitFor("new.partner@example.test", /invitation/i);
    expect(o.out.join("")).toContain(tokenOf(mail));
    const preview = await t.app.inject({ url: `/console/api/auth/invitation?token=${tokenOf(mail)}` });
    expect(preview.json().data.email).toBe("new.partner@example.test");
  });

  it("refuses an address that has an account, and a malformed one", async () => {
    const a = await createAccount(t, "exists");
    const o = io();
    expect(await runAdmin(t.ctx, ["invite", a.email], o.io)).toBe(1);
    expect(o.err.join("")).toMatch(/already has an account/);
    expect(await runAdmin(t.ctx, ["invite", "not an email"], io().io)).toBe(1);
  });

  it("shows and sets a project's plan by id or name, and the new plan's limits apply", async () => {
    const a = await createAccount(t, "planner");
    const p = await createProject(t, [{ id: a.id, role: "owner" }]);
    const o = io();
    expect(await runAdmin(t.ctx, ["plan", String(p.id)], o.io)).toBe(0);
    expect(o.out.join("")).toContain(": free");
    expect(await runAdmin(t.ctx, ["plan", p.name, "metered"], o.io)).toBe(0);
    expect((await t.store.projects.findProjectById(p.id))?.plan).toBe("metered");
    const { key } = await t.services.projects.createKey(p.id, "k");
    const res = await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers: { "api-key": key } });
    expect(res.headers["ratelimit-policy"]).toMatch(/"quota";q=25;/);
    expect(await runAdmin(t.ctx, ["plan", p.name, "platinum"], io().io)).toBe(1);
    expect(await runAdmin(t.ctx, ["plan", "no such project", "free"], io().io)).toBe(1);
  });

  it("lists the plans and prints usage for anything else", async () => {
    const o = io();
    expect(await runAdmin(t.ctx, ["plans"], o.io)).toBe(0);
    expect(o.out.join("")).toMatch(/^free \(default\): 1000 req\/s/m);
    const bad = io();
    expect(await runAdmin(t.ctx, ["frobnicate"], bad.io)).toBe(2);
    expect(bad.err.join("")).toMatch(/usage/);
  });
});

describe("omniname admin invite without SMTP_URL", () => {
  const dir = mkdtempSync(join(tmpdir(), "omniname-admin-"));
  const saved = { ...process.env };
  afterAll(() => {
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the mail to DATA_DIR/outbox and prints the link", async () => {
    process.env = { ...saved, DATA_DIR: dir, LOG_LEVEL: "silent" };
    delete process.env.SMTP_URL;
    delete process.env.DATABASE_URL;
    const writes: string[] = [];
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((s: string) => {
      writes.push(String(s));
      return true;
    }) as typeof process.stdout.write;
    let code: number;
    try {
      code = await adminCommand.run(["invite", "outbox@example.test"]);
    } finally {
      process.stdout.write = original;
    }
    expect(code).toBe(0);
    const files = readdirSync(join(dir, "outbox"));
    expect(files).toHaveLength(1);
    const eml = readFileSync(join(dir, "outbox", files[0]), "utf8");
    expect(eml).toMatch(/To: outbox@example.test/);
    const link = /https?:\/\/\S+token=\S+/.exec(writes.join(""))?.[0];
    expect(link).toBeDefined();
  });
});

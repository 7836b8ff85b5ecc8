// The audit log over the real console API, CLI commands and store, on SQLite and PostgreSQL: every
// kind of change is recorded with its actor, IP, before and after; no secret reaches the table;
// only owners and admins read it; filters, cursors and the CSV / JSON Lines exports; bad input.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_KINDS, CLI_ACTOR, pruneAudit, recordAudit } from "../../src/accounts/audit-log.js";
import type { AuditEntry } from "../../src/accounts/audit-query.js";
import { totpCode } from "../../src/accounts/two-factor.js";
import { runAdmin } from "../../src/cli/admin.command.js";
import { createProjectRulesCommand } from "../../src/cli/scoring.command.js";
import { rawDb } from "../helpers/raw-db.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import {
  Agent,
  type ConsoleTestApp,
  createConsoleTestApp,
  PASSWORD,
  tokenOf,
  uniqueEmail,
} from "./helpers/console-app.js";

const quiet = { out: () => {}, err: () => {} };

/** An entry whose before/after are objects (or null), for reading their fields. */
type Entry = AuditEntry & { before: Record<string, unknown> | null; after: Record<string, unknown> | null };
const descriptionOf = (e: Entry) => e.after?.description ?? "security";

describe.each(STORE_BACKENDS.map((b) => b.name as "sqlite" | "postgres"))("audit log (%s)", (backend) => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Every column of every audit row, as one text. */
  async function tableText(): Promise<string> {
    const rows = await sql`select * from audit_log`.execute(rawDb(t.store));
    return JSON.stringify(rows.rows);
  }

  it("records each kind of change with who, when, the IP, before and after, and never a secret", async () => {
    const owner = await signedIn(t, "audit-owner");
    const agent = owner.agent;
    const created = await agent.post("projects", { name: `audited ${Date.now()} ${backend}` });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    const p = `projects/${id}`;
    const expectOk = async (res: Promise<{ statusCode: number; body: string }>) => {
      const r = await res;
      expect(r.statusCode, r.body).toBeLessThan(300);
      return r;
    };
    await expectOk(agent.patch(p, { description: "before the review" }));
    await expectOk(agent.put(`${p}/settings`, { providerPriority: ["uns"] }));
    await expectOk(agent.put(`${p}/security`, { allowedIps: ["127.0.0.1"], allowedOrigins: [] }));
    const member = await createAccount(t, "audit-member");
    await expectOk(agent.post(`${p}/members`, { email: member.email, role: "viewer" }));
    await expectOk(agent.patch(`${p}/members/${member.id}`, { role: "developer" }));
    await expectOk(agent.delete(`${p}/members/${member.id}`));
    const leaver = await signedIn(t, "audit-leaver");
    await expectOk(agent.post(`${p}/members`, { email: leaver.email, role: "viewer" }));
    await expectOk(leaver.agent.post(`${p}/leave`));
    const invited = await expectOk(
      agent.post(`${p}/members`, { email: uniqueEmail("nobody"), role: "viewer" }),
    );
    const invitationId = JSON.parse(invited.body).data.invitation.id;
    await expectOk(agent.delete(`${p}/invitations/${invitationId}`));
    const key = await expectOk(agent.post(`${p}/keys`, { name: "ci" }));
    const { key: secretKey, id: keyId } = JSON.parse(key.body).data;
    await expectOk(agent.patch(`${p}/keys/${keyId}`, { endpoints: ["resolve"] }));
    const rotated = await expectOk(
      agent.post(`${p}/keys/${keyId}/rotate`, { overlapUntil: new Date(t.clock.now + 60_000).toISOString() }),
    );
    const rotatedSecret = JSON.parse(rotated.body).data.key as string;
    await expectOk(agent.delete(`${p}/keys/${keyId}`));
    // A webhook (a public address literal: nothing resolves or connects): created, edited,
    // disabled, its secret rotated, deleted. A PATCH that changes nothing adds no entry.
    const hook = await expectOk(
      agent.post(`${p}/webhooks`, { url: "https://93.184.216.34/hook", eventTypes: ["domain.created"] }),
    );
    const { webhook, secret: hookSecret } = JSON.parse(hook.body).data;
    await expectOk(agent.patch(`${p}/webhooks/${webhook.id}`, { description: "crm" }));
    await expectOk(agent.patch(`${p}/webhooks/${webhook.id}`, { description: "crm" }));
    await expectOk(agent.patch(`${p}/webhooks/${webhook.id}`, { enabled: false }));
    const rotatedHook = await expectOk(agent.post(`${p}/webhooks/${webhook.id}/rotate-secret`));
    const hookSecret2 = JSON.parse(rotatedHook.body).data.secret as string;
    await expectOk(agent.delete(`${p}/webhooks/${webhook.id}`));
    // Two-factor sign-in on for the owner, then the project's rule.
    const setup = await expectOk(agent.post("account/two-factor/setup"));
    const totpSecret = JSON.parse(setup.body).data.secret as string;
    await expectOk(agent.post("account/two-factor/confirm", { code: totpCode(totpSecret, t.clock.now) }));
    await expectOk(agent.put(`${p}/two-factor`, { required: true }));
    // The CLI: plan and rules.
    expect(await runAdmin(t.ctx, ["plan", String(id), "metered"], quiet)).toBe(0);
    const rules = createProjectRulesCommand({ store: t.store, config: t.ctx.config });
    expect(await rules.run(["rules", "set", String(id), '{"providerPriority":["ens"]}'])).toBe(0);

    const res = await agent.get(`${p}/audit?limit=200`);
    expect(res.statusCode, res.body).toBe(200);
    const entries = res.json().data.entries as Entry[];
    const byKind = (k: string) => entries.filter((e) => e.kind === k);
    const kinds = new Set(entries.map((e) => e.kind));
    for (const k of AUDIT_KINDS.filter((k) => k !== "project.delete" && k !== "member.join"))
      expect(kinds, k).toContain(k);
    const update = byKind("project.update")[0];
    expect(update.before).toMatchObject({ description: "" });
    expect(update.after).toMatchObject({ description: "before the review" });
    expect(update.actor).toEqual({ type: "account", accountId: owner.id, email: owner.email });
    expect(update.ip).toBe("127.0.0.1");
    expect(Date.parse(update.at)).toBe(t.clock.now);
    const cliRules = byKind("settings.update")[0]; // newest first: the CLI's
    expect(cliRules.actor).toEqual({ type: "cli", accountId: null, email: null });
    const consoleRules = byKind("settings.update")[1];
    expect(consoleRules.before).toEqual({});
    expect(consoleRules.after?.providerPriority).toHaveLength(1);
    expect(cliRules.before).toEqual(consoleRules.after);
    expect(cliRules.after).toEqual((await t.store.projects.findProjectById(id))?.settings);
    expect(cliRules.after).not.toEqual(cliRules.before);
    expect(byKind("project.plan")[0]).toMatchObject({ before: { plan: "free" }, after: { plan: "metered" } });
    expect(byKind("security.update")[0]).toMatchObject({
      before: { allowedIps: [], allowedOrigins: [] },
      after: { allowedIps: ["127.0.0.1"], allowedOrigins: [] },
    });
    expect(byKind("member.role")[0]).toMatchObject({
      subject: String(member.id),
      before: { email: member.email, role: "viewer" },
      after: { email: member.email, role: "developer" },
    });
    expect(byKind("member.leave")[0]).toMatchObject({
      actor: { accountId: leaver.id, email: leaver.email },
      before: { email: leaver.email, role: "viewer" },
    });
    expect(byKind("member.remove")[0].before).toEqual({ email: member.email, role: "developer" });
    expect(byKind("key.revoke")[0]).toMatchObject({
      before: { status: "active" },
      after: { status: "revoked" },
    });
    expect(byKind("webhook.create")[0]).toMatchObject({
      subject: String(webhook.id),
      before: null,
      after: { url: "https://93.184.216.34/hook", eventTypes: ["domain.created"], enabled: true },
    });
    expect(byKind("webhook.update").map((e) => [e.before?.description, e.after?.enabled])).toEqual([
      ["crm", false],
      ["", true],
    ]);
    expect(byKind("webhook.rotate_secret")[0]).toMatchObject({ subject: String(webhook.id), before: null });
    expect(byKind("webhook.delete")[0]).toMatchObject({ before: { description: "crm", enabled: false } });
    expect(byKind("two_factor.rule")[0]).toMatchObject({
      before: { required: false },
      after: { required: true },
    });

    const text = await tableText();
    const hashes = await sql<{ hash: string }>`select hash from api_keys where id = ${keyId}`.execute(
      rawDb(t.store),
    );
    for (const secret of [
      secretKey,
      rotatedSecret,
      hashes.rows[0].hash,
      PASSWORD,
      totpSecret,
      hookSecret,
      hookSecret2,
      ...agent.cookies.values(),
    ])
      expect(text).not.toContain(secret);

    // Deleting the project is recorded too; its entries stay (read from the table: the project is gone).
    await expectOk(agent.delete(p));
    expect(await tableText()).toContain("project.delete");
  });

  it("records a registration that joins a project by invitation, by the new account, without its password", async () => {
    const owner = await signedIn(t, "audit-inviter");
    const pr = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const email = uniqueEmail("audit-joiner");
    expect(
      (await owner.agent.post(`projects/${pr.id}/members`, { email, role: "developer" })).statusCode,
    ).toBe(202);
    const token = tokenOf(await t.smtp.waitFor(email, /invited/i));
    const joiner = await new Agent(t.app, "192.0.2.7").start();
    const reg = await joiner.post("auth/register", {
      invitationToken: token,
      fullName: "Joiner",
      email,
      password: PASSWORD,
      acceptTerms: true,
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const entries = (await owner.agent.get(`projects/${pr.id}/audit`)).json().data.entries as Entry[];
    expect(entries.map((e) => e.kind)).toEqual(["member.join", "member.invite"]);
    expect(entries[0]).toMatchObject({
      actor: { type: "account", email },
      ip: "192.0.2.7",
      after: { email, role: "developer" },
    });
    const text = await tableText();
    expect(text).not.toContain(token);
    expect(text).not.toContain(PASSWORD);
  });

  it("records only changes: a security save that changes nothing adds no entry", async () => {
    const owner = await signedIn(t, "audit-noop");
    const pr = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const lists = { allowedIps: ["10.0.0.0/8"], allowedOrigins: ["https://app.example"] };
    for (let i = 0; i < 3; i++)
      expect((await owner.agent.put(`projects/${pr.id}/security`, lists)).statusCode).toBe(200);
    // The same lists written differently (a duplicate) are the same lists.
    const again = await owner.agent.put(`projects/${pr.id}/security`, {
      ...lists,
      allowedIps: ["10.0.0.0/8", "10.0.0.0/8"],
    });
    expect(again.statusCode, again.body).toBe(200);
    const entries = (await owner.agent.get(`projects/${pr.id}/audit?kind=security.update`)).json().data
      .entries as Entry[];
    expect(entries).toHaveLength(1);
    expect(entries[0].before).toEqual({ allowedIps: [], allowedOrigins: [] });
    expect(entries[0].after).toEqual(lists);
  });

  it("records only changes: project, settings, key and role saves that change nothing add no entry", async () => {
    const owner = await signedIn(t, "audit-noop-all");
    const member = await createAccount(t, "audit-noop-member");
    const pr = await createProject(t, [
      { id: owner.id, role: "owner" },
      { id: member.id, role: "viewer" },
    ]);
    const p = `projects/${pr.id}`;
    const key = (await owner.agent.post(`${p}/keys`, { name: "steady" })).json().data as { id: number };
    const saves: Array<[string, () => Promise<{ statusCode: number; body: string }>]> = [
      ["project.update", () => owner.agent.patch(p, { description: "the same words" })],
      ["settings.update", () => owner.agent.put(`${p}/settings`, { providerPriority: ["uns", "ens"] })],
      ["key.update", () => owner.agent.patch(`${p}/keys/${key.id}`, { networks: ["ETHEREUM"] })],
      ["member.role", () => owner.agent.patch(`${p}/members/${member.id}`, { role: "developer" })],
    ];
    for (const [kind, save] of saves) {
      for (let i = 0; i < 3; i++) {
        const res = await save();
        expect(res.statusCode, `${kind}: ${res.body}`).toBe(200);
      }
      const entries = (await owner.agent.get(`${p}/audit?kind=${kind}`)).json().data.entries as Entry[];
      expect(entries, kind).toHaveLength(1);
    }
    // A save that changed nothing answers what is saved, as a save that did.
    const saved = await owner.agent.put(`${p}/settings`, { providerPriority: ["uns", "ens"] });
    expect(saved.json().data).toEqual((await owner.agent.get(`${p}/settings`)).json().data);
    // A real change after the no-ops is still recorded.
    expect((await owner.agent.patch(p, { description: "other words" })).statusCode).toBe(200);
    const updates = (await owner.agent.get(`${p}/audit?kind=project.update`)).json().data.entries as Entry[];
    expect(updates.map(descriptionOf)).toEqual(["other words", "the same words"]);
  });

  it("writes the entry in the change's transaction: a refused change leaves none", async () => {
    const owner = await signedIn(t, "audit-tx");
    const pr = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const before = await tableText();
    const res = await owner.agent.put(`projects/${pr.id}/settings`, { providerPriority: ["no such"] });
    expect(res.statusCode).toBe(400);
    expect(await tableText()).toBe(before);
  });

  it("is read by owners and admins only, and no route edits or deletes an entry", async () => {
    const owner = await signedIn(t, "audit-o");
    const admin = await signedIn(t, "audit-a");
    const dev = await signedIn(t, "audit-d");
    const viewer = await signedIn(t, "audit-v");
    const pr = await createProject(t, [
      { id: owner.id, role: "owner" },
      { id: admin.id, role: "admin" },
      { id: dev.id, role: "developer" },
      { id: viewer.id, role: "viewer" },
    ]);
    await owner.agent.patch(`projects/${pr.id}`, { description: "x" });
    const url = `projects/${pr.id}/audit`;
    expect((await owner.agent.get(url)).statusCode).toBe(200);
    expect((await admin.agent.get(url)).json().data.entries).toHaveLength(1);
    expect((await dev.agent.get(url)).statusCode).toBe(403);
    expect((await viewer.agent.get(url)).statusCode).toBe(403);
    expect((await viewer.agent.get(`${url}?format=csv`)).statusCode).toBe(403);
    const stranger = await signedIn(t, "audit-s");
    expect((await stranger.agent.get(url)).statusCode).toBe(404);
    const entryId = (await owner.agent.get(url)).json().data.entries[0].id;
    for (const method of ["PUT", "PATCH", "DELETE", "POST"])
      for (const u of [url, `${url}/${entryId}`]) {
        const r = await owner.agent.request(method, u, method === "DELETE" ? undefined : {});
        expect(r.statusCode, `${method} ${u}`).toBe(404);
      }
    expect((await owner.agent.get(url)).json().data.entries).toHaveLength(1);
  });

  it("filters by kind, member and dates, pages with a cursor, and exports CSV and JSON Lines", async () => {
    const owner = await signedIn(t, "audit-f");
    const admin = await signedIn(t, "audit-f2");
    const pr = await createProject(t, [
      { id: owner.id, role: "owner" },
      { id: admin.id, role: "admin" },
    ]);
    const day0 = t.clock.now;
    for (let i = 0; i < 5; i++) await owner.agent.patch(`projects/${pr.id}`, { description: `d${i}` });
    t.clock.now += 3_600_000; // a session's idle limit is shorter than a day
    await admin.agent.put(`projects/${pr.id}/security`, {
      allowedIps: [],
      allowedOrigins: ["https://a.test"],
    });
    const url = `projects/${pr.id}/audit`;
    const get = async (q: string) => (await owner.agent.get(`${url}?${q}`)).json().data;
    expect((await get("kind=security.update")).entries.map((e: Entry) => e.actor.email)).toEqual([
      admin.email,
    ]);
    expect((await get(`member=${owner.id}`)).entries).toHaveLength(5);
    const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
    expect((await get(`to=${iso(day0 + 1000)}`)).entries).toHaveLength(5);
    expect((await get(`from=${iso(t.clock.now - 1000)}`)).entries).toHaveLength(1);
    const day = new Date(day0).toISOString().slice(0, 10);
    expect((await get(`from=${day}&to=${day}`)).entries.length).toBeGreaterThanOrEqual(5);
    // Pages of 2: 2 + 2 + 2, newest first, then no cursor.
    const seen: string[] = [];
    let q = "limit=2";
    for (let n = 0; n < 3; n++) {
      const page = await get(q);
      seen.push(...page.entries.map(descriptionOf));
      if (n < 2) expect(page.nextCursor).not.toBeNull();
      else expect(page.nextCursor).toBeNull();
      q = `limit=2&cursor=${page.nextCursor}`;
    }
    expect(seen).toEqual(["security", "d4", "d3", "d2", "d1", "d0"]);

    const csv = await owner.agent.get(`${url}?format=csv&kind=project.update`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/);
    expect(csv.headers["content-disposition"]).toBe(`attachment; filename="audit-project-${pr.id}.csv"`);
    const lines = csv.body.trimEnd().split("\r\n");
    expect(lines[0]).toBe("id,at,kind,actor,actor_account_id,actor_email,ip,subject,before,after");
    expect(lines).toHaveLength(6);
    expect(lines[1]).toContain(`,project.update,account,${owner.id},${owner.email},127.0.0.1,,`);
    expect(lines[1]).toContain('"{""name"":');
    // Not through Agent.request, which reads any JSON-ish answer as one JSON document.
    const cookie = [...owner.agent.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const jsonl = await t.app.inject({ url: `/console/api/${url}?format=jsonl`, headers: { cookie } });
    expect(jsonl.headers["content-type"]).toMatch(/^application\/jsonl/);
    const objs = jsonl.body
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(objs).toHaveLength(6);
    expect(objs[0]).toMatchObject({ kind: "security.update", after: { allowedOrigins: ["https://a.test"] } });
  });

  it("exports every entry across the export's internal pages, newest first, each once", async () => {
    const owner = await signedIn(t, "audit-many");
    const pr = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const n = 1_234; // more than two of the export's pages of 500
    await t.store.transaction(async (tx) => {
      for (let i = 0; i < n; i++)
        await recordAudit(
          tx.accounts,
          { projectId: pr.id, kind: "project.update", after: { description: `d${i}` } },
          t.clock.now,
          CLI_ACTOR,
        );
    });
    const cookie = [...owner.agent.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await t.app.inject({
      url: `/console/api/projects/${pr.id}/audit?format=jsonl`,
      headers: { cookie },
    });
    expect(res.statusCode).toBe(200);
    const ids = res.body
      .trimEnd()
      .split("\n")
      .map((l) => (JSON.parse(l) as AuditEntry).id);
    expect(ids).toHaveLength(n);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(n);
    const csv = await owner.agent.get(`projects/${pr.id}/audit?format=csv`);
    expect(csv.body.trimEnd().split("\r\n")).toHaveLength(n + 1);
  });

  it("answers bad filters with 400 naming the field", async () => {
    const owner = await signedIn(t, "audit-bad");
    const pr = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const cases: Array<[string, string]> = [
      ["from=2026-02-30", "from"],
      ["from=yesterday", "from"],
      ["to=2026-13-01", "to"],
      ["from=2026-05-02&to=2026-05-01", "from"],
      ["kind=key.steal", "kind"],
      ["member=-1", "member"],
      ["member=abc", "member"],
      ["limit=0", "limit"],
      ["limit=100000", "limit"],
      [`limit=${"9".repeat(400)}`, "limit"],
      ["cursor=1e9", "cursor"],
      ["format=xml", "format"],
      ["format=csv&cursor=5", "cursor"],
      [`kind=${"k".repeat(65)}`, "kind"],
      [`from=${"2".repeat(5000)}`, "from"],
      ["member=1&member=2", "member"],
    ];
    for (const [q, field] of cases) {
      const res = await owner.agent.get(`projects/${pr.id}/audit?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.message, q).toContain(field);
    }
  });

  it("prunes entries older than the retention", async () => {
    const owner = await signedIn(t, "audit-prune");
    const pr = await createProject(t, [{ id: owner.id, role: "owner" }]);
    await owner.agent.patch(`projects/${pr.id}`, { description: "old" });
    t.clock.now += 1000;
    await owner.agent.patch(`projects/${pr.id}`, { description: "new" });
    expect(await pruneAudit(t.store.accounts, t.clock.now - 500)).toBeGreaterThanOrEqual(1);
    const left = (await owner.agent.get(`projects/${pr.id}/audit`)).json().data.entries;
    expect(left.map(descriptionOf)).toEqual(["new"]);
  });
});

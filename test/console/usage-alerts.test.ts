import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleServices, createConsoleServices } from "../../src/accounts/console-services.js";
import { redisBackend } from "../../src/accounts/limiter-backend.js";
import { buildApp } from "../../src/api/app.js";
import { rawDb } from "../helpers/raw-db.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import { Agent, type ConsoleTestApp, createConsoleTestApp, PASSWORD, V1 } from "./helpers/console-app.js";

const RESOLVE = `${V1}/resolve?domain=alice.wallet`;
const DAY_MS = 86_400_000;
const PLANS = {
  free: { rps: 1000, monthlyQuota: 1_000_000, maxProjects: 5, maxKeys: 5, maxMembers: 10 },
  metered: { rps: 1000, monthlyQuota: 25, maxProjects: 5, maxKeys: 5, maxMembers: 10 },
  // Two requests a second per key: a quick burst of 30 is refused ~28 times.
  slow: { rps: 2, monthlyQuota: 1_000_000, maxProjects: 5, maxKeys: 5, maxMembers: 10 },
};

for (const backend of ["sqlite", "postgres"] as const) {
  describe(`usage alerts (${backend})`, () => {
    let t: ConsoleTestApp;
    let redis: Redis;
    let services2: ConsoleServices;
    let app2: FastifyInstance;
    const prefix = `omniname-alerts-${randomBytes(6).toString("hex")}`;

    beforeAll(async () => {
      redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
      t = await createConsoleTestApp({
        backend,
        config: { plans: PLANS, alertRateRefusals: 5, alertRateWindowS: 60 },
        services: { backend: redisBackend(redis, prefix) },
      });
      // A second API process: its own services, app and in-memory state over the same store and Redis.
      services2 = createConsoleServices(t.ctx, { backend: redisBackend(redis, prefix) });
      app2 = await buildApp(t.ctx, { services: services2 });
    });
    afterAll(async () => {
      await app2?.close();
      await services2?.close();
      await t?.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });

    async function team(plan: string) {
      const owner = await signedIn(t, "owner");
      const admin = await createAccount(t, "admin");
      const dev = await signedIn(t, "dev");
      const viewer = await signedIn(t, "viewer");
      const p = await createProject(
        t,
        [
          { id: owner.id, role: "owner" },
          { id: admin.id, role: "admin" },
          { id: dev.id, role: "developer" },
          { id: viewer.id, role: "viewer" },
        ],
        plan,
      );
      return { p, owner, admin, dev, viewer };
    }

    /** Everything both processes started is written and mailed. */
    async function settle() {
      for (const s of [t.services, services2]) {
        await s.alerts.drain();
        await s.accounts.drainMail();
      }
    }
    const mailsTo = (email: string, subject: RegExp) =>
      t.smtp.mails.filter((m) => m.to === email && subject.test(m.subject));
    const claims = () => t.services.alerts.claims + services2.alerts.claims;
    const call = (app: FastifyInstance, key: string) =>
      app.inject({ url: RESOLVE, headers: { "api-key": key } });

    it("mails owners and admins once at 80 % and once at 100 % of the quota, across two processes, and again the next day", async () => {
      const { p, owner, admin, dev, viewer } = await team("metered");
      const { key } = await t.services.projects.createKey(p.id, "main");
      const apps = [t.app, app2];
      const before = claims();
      // 19 of 25: below 80 %, no store write at all.
      for (let i = 1; i <= 19; i++) expect((await call(apps[i % 2], key)).statusCode).toBe(200);
      await settle();
      expect(claims()).toBe(before);
      expect(mailsTo(owner.email, /quota/)).toHaveLength(0);

      // Requests 20 and 21 at once, one on each process: both cross 80 %, one mail goes out.
      const both = await Promise.all(apps.map((a) => call(a, key)));
      expect(both.map((r) => r.statusCode)).toEqual([200, 200]);
      await settle();
      // Each process decided on its own (one insert each); the store's unique row let one mail.
      expect(claims() - before).toBe(2);
      const eighty = /used 80 % of its monthly quota/;
      const m = await t.smtp.waitFor(owner.email, eighty);
      expect(m.text).toContain(`/console/projects/${p.id}`);
      expect(m.text).toMatch(/has used 2[01] of its 25 requests/);
      await t.smtp.waitFor(admin.email, eighty);
      // More requests above 80 % on both processes: no further store write, no further mail.
      const afterCross = claims();
      for (let i = 0; i < 2; i++) expect((await call(apps[i % 2], key)).statusCode).toBe(200);
      await settle();
      expect(claims()).toBe(afterCross);
      expect(mailsTo(owner.email, eighty)).toHaveLength(1);
      expect(mailsTo(admin.email, eighty)).toHaveLength(1);

      // 24, 25: the last unit of the quota; then refusals. One 100 % mail.
      for (let i = 0; i < 2; i++) expect((await call(apps[i % 2], key)).statusCode).toBe(200);
      for (const a of apps) expect((await call(a, key)).json().error.code).toBe("QUOTA_EXCEEDED");
      await settle();
      const full = /used all of its monthly quota/;
      await t.smtp.waitFor(owner.email, full);
      expect(mailsTo(owner.email, full)).toHaveLength(1);
      expect(mailsTo(admin.email, full)).toHaveLength(1);
      for (const other of [dev.email, viewer.email])
        expect(t.smtp.mails.filter((x) => x.to === other)).toEqual([]);

      // The next UTC day, still over: mailed again (100 % only; 80 % is implied).
      t.clock.now += DAY_MS;
      for (const a of apps) expect((await call(a, key)).statusCode).toBe(429);
      await settle();
      expect(mailsTo(owner.email, full)).toHaveLength(2);
      expect(mailsTo(admin.email, full)).toHaveLength(2);
      expect(mailsTo(owner.email, eighty)).toHaveLength(1);
      for (const other of [dev.email, viewer.email])
        expect(t.smtp.mails.filter((x) => x.to === other)).toEqual([]);

      // A new sign-in: the day's wait idled the old session out.
      const again = await new Agent(t.app).start();
      expect((await again.post("auth/login", { email: owner.email, password: PASSWORD })).statusCode).toBe(
        200,
      );
      const res = await again.get(`projects/${p.id}/alerts`);
      expect(res.statusCode).toBe(200);
      const alerts = res.json().data.alerts as Array<Record<string, unknown>>;
      expect(alerts.map((a) => [a.kind, a.day, a.recipients])).toEqual([
        ["quota_100", "2026-11-22", 2],
        ["quota_100", "2026-11-21", 2],
        ["quota_80", "2026-11-21", 2],
      ]);
      expect(alerts[0].details).toEqual({ used: 25, limit: 25 });
      expect(res.json().data.today).toBe("2026-11-22");
      expect(alerts[0].raisedAt).toBe(new Date(t.clock.now).toISOString());
      t.clock.now -= DAY_MS;
    });

    it("mails when a key keeps hitting its rate limit: once a day per key", async () => {
      const { p, owner, admin, dev, viewer } = await team("slow");
      const a = await t.services.projects.createKey(p.id, "hammer");
      const b = await t.services.projects.createKey(p.id, "other");
      const subject = /keeps hitting its rate limit/;
      // Four refusals: below the threshold of five.
      let refused = 0;
      while (refused < 4) if ((await call(t.app, a.key)).statusCode === 429) refused++;
      await settle();
      expect(mailsTo(owner.email, subject)).toHaveLength(0);
      // Many more on both processes (the refusals add up in Redis): one mail per recipient.
      for (let i = 0; i < 30; i++) await call([t.app, app2][i % 2], a.key);
      await settle();
      const m = await t.smtp.waitFor(owner.email, subject);
      expect(m.text).toContain('"hammer"');
      expect(m.text).toContain("within 60 seconds");
      expect(mailsTo(owner.email, subject)).toHaveLength(1);
      expect(mailsTo(admin.email, subject)).toHaveLength(1);
      // Another key of the project is its own alert.
      for (let i = 0; i < 30; i++) await call(app2, b.key);
      await settle();
      expect(mailsTo(owner.email, subject)).toHaveLength(2);
      // The next day, still refused: mailed again.
      t.clock.now += DAY_MS;
      for (let i = 0; i < 10; i++) await call(t.app, a.key);
      await settle();
      expect(mailsTo(owner.email, subject)).toHaveLength(3);
      for (const other of [dev.email, viewer.email])
        expect(t.smtp.mails.filter((x) => x.to === other)).toEqual([]);
      t.clock.now -= DAY_MS;
      const res = await owner.agent.get(`projects/${p.id}/alerts?limit=10`);
      const alerts = res.json().data.alerts as Array<{ kind: string; details: Record<string, unknown> }>;
      expect(alerts.map((x) => [x.kind, x.details.keyName])).toEqual([
        ["rate_limited", "hammer"],
        ["rate_limited", "other"],
        ["rate_limited", "hammer"],
      ]);
      expect(alerts[0].details).toMatchObject({ keyId: a.id, windowSeconds: 60 });
      expect(Number(alerts[0].details.refusals)).toBeGreaterThanOrEqual(5);
      expect((await owner.agent.get(`projects/${p.id}/alerts?limit=1`)).json().data.alerts).toHaveLength(1);
      // Deleting the project deletes its alerts.
      const rows = () =>
        rawDb(t.store).selectFrom("usage_alerts").select("id").where("project_id", "=", p.id).execute();
      expect(await rows()).toHaveLength(3);
      await t.services.projects.delete(p.id);
      expect(await rows()).toEqual([]);
    });

    it("lists alerts to owners and admins only, and refuses bad input", async () => {
      const { p, owner, dev, viewer } = await team("free");
      const adminAgent = await signedIn(t, "admin2");
      await t.services.projects.repo.addMember(p.id, adminAgent.id, "admin", t.clock.now);
      const outsider = await signedIn(t, "outsider");
      expect((await owner.agent.get(`projects/${p.id}/alerts`)).json()).toEqual({
        result: true,
        data: { today: "2026-11-21", alerts: [] },
      });
      expect((await adminAgent.agent.get(`projects/${p.id}/alerts`)).statusCode).toBe(200);
      for (const who of [dev, viewer]) {
        const r = await who.agent.get(`projects/${p.id}/alerts`);
        expect(r.statusCode).toBe(403);
        expect(r.json().error.code).toBe("FORBIDDEN");
      }
      expect((await outsider.agent.get(`projects/${p.id}/alerts`)).statusCode).toBe(404);
      const anonymous = await new Agent(t.app).start();
      expect((await anonymous.get(`projects/${p.id}/alerts`)).statusCode).toBe(401);
      const bad = [
        ["limit=0", "INVALID_PARAMETER"],
        ["limit=101", "INVALID_PARAMETER"],
        ["limit=-1", "INVALID_PARAMETER"],
        ["limit=1.5", "INVALID_PARAMETER"],
        ["limit=abc", "INVALID_PARAMETER"],
        [`limit=${"9".repeat(400)}`, "INVALID_PARAMETER"],
        ["limit=1&limit=2", "INVALID_PARAMETER"],
        ["limit=%00", "INVALID_PARAMETER"],
      ];
      for (const [q, code] of bad) {
        const r = await owner.agent.get(`projects/${p.id}/alerts?${q}`);
        expect(r.statusCode, q).toBe(400);
        expect(r.json().error.code, q).toBe(code);
      }
      for (const id of ["abc", "0", "-1", "1".repeat(40)]) {
        const r = await owner.agent.get(`projects/${id}/alerts`);
        expect(r.statusCode, id).toBeGreaterThanOrEqual(400);
        expect(r.statusCode, id).toBeLessThan(500);
      }
    });
  });
}

describe("usage alerts turned off (USAGE_ALERTS=false)", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp({ config: { plans: PLANS, usageAlerts: false, alertRateRefusals: 1 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("neither writes nor mails at 100 % of the quota or on rate refusals", async () => {
    const owner = await createAccount(t, "owner");
    const metered = await createProject(t, [{ id: owner.id, role: "owner" }], "metered");
    const slow = await createProject(t, [{ id: owner.id, role: "owner" }], "slow");
    for (const p of [metered, slow]) {
      const { key } = await t.services.projects.createKey(p.id, "k");
      for (let i = 0; i < 30; i++) await t.app.inject({ url: RESOLVE, headers: { "api-key": key } });
    }
    await t.services.alerts.drain();
    await t.services.accounts.drainMail();
    expect(t.services.alerts.claims).toBe(0);
    expect(t.smtp.mails.filter((m) => m.to === owner.email)).toEqual([]);
  });
});

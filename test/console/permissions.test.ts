import { readFileSync } from "node:fs";
import { sealSecret } from "../../src/accounts/sealed-secret.js";
import { WebhooksRepo } from "../../src/accounts/webhooks.repo.js";
import { newWebhookSecret, WEBHOOK_SECRET_PURPOSE } from "../../src/workers/webhook-worker.js";
import type { WebhookService } from "../../src/api/webhooks/webhook-service.js";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS, ROLES, type Role } from "../../src/accounts/permissions.js";
import { createResolution } from "../../src/resolution/resolution.js";
import { CONSOLE_PREFIX, consoleRoutes } from "../../src/api/routes/console/console.routes.js";
import { createAccount, createProject, signedIn } from "./helpers/accounts.js";
import {
  type Agent,
  API,
  type ConsoleTestApp,
  createConsoleTestApp,
  uniqueEmail,
  V1,
} from "./helpers/console-app.js";

const WEBHOOK = {
  url: "http://127.0.0.1:9/hook",
  description: "",
  eventTypes: [],
  filters: {},
  enabled: true,
};

const doc = readFileSync(new URL("../../docs/permissions.md", import.meta.url), "utf8");

/** The rows of the markdown table that follows a heading. */
function table(heading: string): string[][] {
  const start = doc.indexOf(`## ${heading}`);
  expect(start, `docs/permissions.md has "## ${heading}"`).toBeGreaterThanOrEqual(0);
  const lines = doc.slice(start).split("\n");
  const rows: string[][] = [];
  let inTable = false;
  for (const l of lines.slice(1)) {
    if (l.startsWith("## ")) break;
    if (!l.startsWith("|")) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = l
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.every((c) => /^-+$/.test(c))) continue;
    rows.push(cells);
  }
  return rows.slice(1); // header
}

const yes = (cell: string) => {
  expect(["yes", "no"]).toContain(cell);
  return cell === "yes";
};

const permissionRows = table("Permissions");
const projectRoutes = table("Project routes").map(([method, route, permission, ...cells]) => ({
  method,
  route,
  permission,
  allowed: Object.fromEntries(ROLES.map((r, i) => [r, yes(cells[i])])) as Record<Role, boolean>,
}));
const accountRoutes = table("Account routes").map(([method, route, access]) => ({ method, route, access }));

interface Collected {
  method: string;
  url: string;
  auth?: string;
  permission?: string;
  bodyLimit?: number;
  summary?: string;
}

/** The console routes as the plugin registers them, with their declared access. */
async function collectRoutes(t: ConsoleTestApp): Promise<Collected[]> {
  const bare = Fastify();
  const out: Collected[] = [];
  bare.addHook("onRoute", (r) => {
    for (const m of [r.method].flat()) {
      if (m === "HEAD") continue;
      const cfg = (r.config ?? {}) as { auth?: string; permission?: string };
      const summary = (r.schema as { summary?: string } | undefined)?.summary;
      out.push({
        method: m,
        url: r.url,
        auth: cfg.auth,
        permission: cfg.permission,
        bodyLimit: r.bodyLimit,
        summary,
      });
    }
  });
  await bare.register(consoleRoutes, {
    prefix: CONSOLE_PREFIX,
    services: t.services,
    config: t.ctx.config,
    resolution: createResolution({ store: t.store.domainMap, ranker: t.ctx.ranker }),
    // Only the routes are collected here: no handler runs.
    webhooks: {} as WebhookService,
  });
  await bare.ready();
  await bare.close();
  return out;
}

describe("the permission matrix (docs/permissions.md)", () => {
  let t: ConsoleTestApp;
  let routes: Collected[];
  beforeAll(async () => {
    t = await createConsoleTestApp({
      config: {
        plans: {
          free: { rps: 1000, monthlyQuota: 1_000_000, maxProjects: 1000, maxKeys: 1000, maxMembers: 1000 },
        },
      },
    });
    routes = await collectRoutes(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("documents exactly the permissions of the code, role by role", () => {
    expect(permissionRows.map((r) => r[0]).sort()).toEqual(Object.keys(PERMISSIONS).sort());
    for (const [permission, ...cells] of permissionRows) {
      const documented = ROLES.filter((_, i) => yes(cells[i]));
      expect(documented, permission).toEqual([...PERMISSIONS[permission as keyof typeof PERMISSIONS]]);
    }
  });

  it("documents every console route with the access the code declares", () => {
    const documented = [
      ...projectRoutes.map((r) => `${r.method} ${r.route} ${r.permission}`),
      ...accountRoutes.map((r) => `${r.method} ${r.route} ${r.access}`),
    ].sort();
    const declared = routes
      .map((r) => `${r.method} ${r.url} ${r.permission ?? (r.auth === "public" ? "public" : "session")}`)
      .sort();
    expect(declared).toEqual(documented);
    // The per-route role columns follow the permission's row.
    for (const r of projectRoutes) {
      expect(
        ROLES.filter((role) => r.allowed[role]),
        `${r.method} ${r.route}`,
      ).toEqual([...PERMISSIONS[r.permission as keyof typeof PERMISSIONS]]);
    }
  });

  it("declares every console route as one consoleRouter entry (access, summary, body limit)", () => {
    // A route added with scope.get(...) beside the router would have no body limit of its own.
    const bare = routes
      .filter((r) => r.bodyLimit === undefined || !r.summary)
      .map((r) => `${r.method} ${r.url}`);
    expect(bare).toEqual([]);
    expect(routes.length).toBeGreaterThan(40);
  });

  it("refuses every session route without a session, and lets public routes through", async () => {
    for (const r of [...accountRoutes, ...projectRoutes.map((p) => ({ ...p, access: "session" }))]) {
      const url = r.route.replace(/:[a-zA-Z]+/g, "1");
      const res = await t.app.inject({ method: r.method as "GET", url });
      if (r.access === "session") {
        expect(res.statusCode, `${r.method} ${r.route}`).toBe(401);
        expect(res.json().error.code).toBe("UNAUTHENTICATED");
      } else expect(res.statusCode, `${r.method} ${r.route}`).not.toBe(401);
    }
  });

  describe("route by route, role by role", () => {
    const actors = {} as Record<Role | "outsider", { id: number; email: string; agent: Agent }>;
    let secondOwner: { id: number };
    let target: { id: number };
    let outsiderProject: { id: number };

    beforeAll(async () => {
      for (const r of [...ROLES, "outsider"] as const) actors[r] = await signedIn(t, r);
      secondOwner = await createAccount(t, "owner2");
      target = await createAccount(t, "target");
      outsiderProject = await createProject(t, [{ id: actors.outsider.id, role: "owner" }]);
    });

    /** A fresh project per case: every role, a second owner, a developer to act on, a key, an invitation. */
    async function fixture() {
      const p = await createProject(t, [
        ...ROLES.map((role) => ({ id: actors[role].id, role })),
        { id: secondOwner.id, role: "owner" as Role },
        { id: target.id, role: "developer" as Role },
      ]);
      const key = await t.services.projects.createKey(p.id, "fixture");
      const { invitation } = await t.services.accounts.invite(uniqueEmail("pending"), {
        projectId: p.id,
        role: "viewer",
      });
      // A receiver nobody listens on (127.0.0.1 port 9): the test event is sent and fails at once.
      const hook = await new WebhooksRepo(t.store.accounts).create(p.id, WEBHOOK, 0, t.clock.now, (id) =>
        sealSecret(t.ctx.pepper, WEBHOOK_SECRET_PURPOSE, id, newWebhookSecret()),
      );
      return { project: p, key, invitationId: invitation.id, webhookId: hook.id, secretEnc: hook.secretEnc };
    }

    function call(agent: Agent, route: string, method: string, ids: Record<string, number>) {
      const url = route.replace(/:([a-zA-Z]+)/g, (_, name: string) => String(ids[name]));
      const bodies: Record<string, unknown> = {
        "PATCH /console/api/projects/:projectId": { description: "changed" },
        "PUT /console/api/projects/:projectId/settings": { providerPriority: ["ENS"] },
        "POST /console/api/projects/:projectId/settings/dry-run": { settings: { providerPriority: ["ENS"] } },
        "POST /console/api/projects/:projectId/try": { method: "resolve", domain: "alice.wallet" },
        "PUT /console/api/projects/:projectId/security": { allowedIps: ["10.0.0.0/8"], allowedOrigins: [] },
        // Not requiring it: requiring it needs the caller's own second factor (two-factor.test.ts).
        "PUT /console/api/projects/:projectId/two-factor": { required: false },
        "POST /console/api/projects/:projectId/members": { email: uniqueEmail("new"), role: "viewer" },
        "PATCH /console/api/projects/:projectId/members/:accountId": { role: "viewer" },
        "POST /console/api/projects/:projectId/keys": { name: "new" },
        "PATCH /console/api/projects/:projectId/keys/:keyId": { endpoints: ["resolve"] },
        "POST /console/api/projects/:projectId/keys/:keyId/rotate": {
          overlapUntil: new Date(t.clock.now + 60_000).toISOString(),
        },
        "POST /console/api/projects/:projectId/leave": {},
        "POST /console/api/projects/:projectId/webhooks": { url: WEBHOOK.url },
        "PATCH /console/api/projects/:projectId/webhooks/:webhookId": { description: "changed" },
      };
      return agent.request(method, url, bodies[`${method} ${route}`]);
    }

    for (const r of projectRoutes) {
      for (const role of ROLES) {
        it(`${r.method} ${r.route} as ${role}: ${r.allowed[role] ? "allowed" : "403"}`, async () => {
          const f = await fixture();
          const ids = {
            projectId: f.project.id,
            accountId: target.id,
            keyId: f.key.id,
            invitationId: f.invitationId,
            webhookId: f.webhookId,
          };
          const res = await call(actors[role].agent, r.route, r.method, ids);
          if (r.allowed[role]) {
            expect(res.statusCode, res.body).toBeGreaterThanOrEqual(200);
            expect(res.statusCode, res.body).toBeLessThan(300);
            expect(res.json().result).toBe(true);
          } else {
            expect(res.statusCode, res.body).toBe(403);
            expect(res.json().error.code).toBe("FORBIDDEN");
            // Refused means nothing happened.
            const still = await t.store.projects.findProjectById(f.project.id);
            expect(still?.description).toBe("");
            expect((await t.services.projects.listKeys(f.project.id)).map((k) => k.id)).toEqual([f.key.id]);
            expect(await t.services.projects.repo.findRole(f.project.id, target.id)).toBe("developer");
            const hooks = await new WebhooksRepo(t.store.accounts).listByProject(f.project.id);
            expect(hooks.map((h) => [h.id, h.description, h.secretEnc === f.secretEnc])).toEqual([
              [f.webhookId, "", true],
            ]);
          }
        });
      }

      it(`${r.method} ${r.route} as a member of another team: 404, nothing changes`, async () => {
        const f = await fixture();
        const ids = {
          projectId: f.project.id,
          accountId: target.id,
          keyId: f.key.id,
          invitationId: f.invitationId,
          webhookId: f.webhookId,
        };
        const res = await call(actors.outsider.agent, r.route, r.method, ids);
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json()).toEqual({
          result: false,
          error: { code: "NOT_FOUND", message: "No such project." },
        });
        expect(await t.store.projects.findProjectById(f.project.id)).not.toBeNull();
        expect((await t.services.projects.listKeys(f.project.id)).map((k) => k.id)).toEqual([f.key.id]);
      });
    }

    it("cannot reach another team's key, member or invitation through a project of its own", async () => {
      const f = await fixture();
      const outsider = actors.outsider.agent;
      const p = outsiderProject.id;
      expect((await outsider.delete(`projects/${p}/keys/${f.key.id}`)).statusCode).toBe(404);
      expect(
        (await outsider.patch(`projects/${p}/members/${target.id}`, { role: "viewer" })).statusCode,
      ).toBe(404);
      expect((await outsider.delete(`projects/${p}/members/${target.id}`)).statusCode).toBe(404);
      expect((await outsider.delete(`projects/${p}/invitations/${f.invitationId}`)).statusCode).toBe(404);
      // The key still works, the developer is still there.
      const v1 = await t.app.inject({
        url: `${V1}/resolve?domain=alice.wallet`,
        headers: { "api-key": f.key.key },
      });
      expect(v1.statusCode).toBe(200);
      expect(await t.services.projects.repo.findRole(f.project.id, target.id)).toBe("developer");
      // And the project list shows only its own project.
      const list = (await outsider.get("projects")).json().data as Array<{ id: number }>;
      expect(list.map((x) => x.id)).toEqual([p]);
    });

    it("keeps the target rules: admins cannot touch owners or make one; the last owner stays", async () => {
      const f = await fixture();
      const admin = actors.admin.agent;
      const pid = f.project.id;
      const toOwner = await admin.patch(`projects/${pid}/members/${target.id}`, { role: "owner" });
      expect(toOwner.statusCode).toBe(403);
      expect(
        (await admin.patch(`projects/${pid}/members/${secondOwner.id}`, { role: "viewer" })).statusCode,
      ).toBe(403);
      expect((await admin.delete(`projects/${pid}/members/${secondOwner.id}`)).statusCode).toBe(403);
      expect(
        (await admin.post(`projects/${pid}/members`, { email: uniqueEmail("x"), role: "owner" })).statusCode,
      ).toBe(403);

      const owner = actors.owner.agent;
      expect((await owner.delete(`projects/${pid}/members/${secondOwner.id}`)).statusCode).toBe(200);
      const last = await owner.patch(`projects/${pid}/members/${actors.owner.id}`, { role: "admin" });
      expect(last.statusCode).toBe(409);
      expect(last.json().error.code).toBe("LAST_OWNER");
      expect((await owner.post(`projects/${pid}/leave`)).json().error.code).toBe("LAST_OWNER");
      expect((await owner.patch(`projects/${pid}/members/${target.id}`, { role: "owner" })).statusCode).toBe(
        200,
      );
      expect((await owner.post(`projects/${pid}/leave`)).statusCode).toBe(200);
      expect((await owner.get(`projects/${pid}`)).statusCode).toBe(404);
    });

    it("shows a member the project through GET /projects with its role", async () => {
      const f = await fixture();
      const list = (await actors.viewer.agent.get(`${API}/projects`)).json().data as Array<{
        id: number;
        role: string;
      }>;
      expect(list.find((p) => p.id === f.project.id)?.role).toBe("viewer");
    });
  });
});

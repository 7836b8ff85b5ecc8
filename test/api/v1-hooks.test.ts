import { describe, expect, it } from "vitest";
import { createApiKey } from "../../src/accounts/api-keys.js";
import { createTestApp } from "./helpers/test-app.js";

const RESOLVE = "/svc/api/v1/resolve?domain=alice.wallet";

describe("the v1 hooks run in every app, console API served or not", () => {
  it.each([false, true])("rate-limits a project on its plan, with the console API %s", async (console) => {
    const t = await createTestApp({ app: { console } });
    try {
      const project = await t.store.projects.createProject({ name: "small", plan: "free" });
      const { key } = await createApiKey(t.store, t.ctx.pepper, project.id, "k");
      const { rps } = t.ctx.config.plans.free!;
      // The app's clock stands still: every request falls in one rate window.
      for (let i = 0; i < rps; i++) {
        const ok = await t.get(RESOLVE, { "api-key": key });
        expect(ok.statusCode).toBe(200);
        expect(ok.headers.ratelimit).toBeDefined();
      }
      const refused = await t.get(RESOLVE, { "api-key": key });
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe("RATE_LIMITED");
    } finally {
      await t.close();
    }
  });

  it("records usage of every answered request", async () => {
    const t = await createTestApp();
    try {
      await t.get(RESOLVE);
      await t.get("/svc/api/v1/resolve?domain=nobody.wallet");
      expect(await t.services.limits.quotaUsed(t.projectId)).toBe(2);
    } finally {
      await t.close();
    }
  });
});

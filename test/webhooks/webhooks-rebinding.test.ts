import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealSecret } from "../../src/accounts/sealed-secret.js";
import { WebhookQueueRepo } from "../../src/accounts/webhook-queue.repo.js";
import { WebhooksRepo } from "../../src/accounts/webhooks.repo.js";
import { newWebhookSecret, WEBHOOK_SECRET_PURPOSE } from "../../src/workers/webhook-worker.js";
import { event } from "../api/helpers/change-feed.js";
import { createProject } from "../console/helpers/accounts.js";
import { type ConsoleTestApp, createConsoleTestApp } from "../console/helpers/console-app.js";
import { until } from "./receiver.js";

// The address is checked again at each delivery, by the socket's own lookup: a name that resolved
// to a public address when the webhook was registered and resolves to a private one now is refused
// before any connection (the resolver here is a table: nothing is connected to).
const DNS: Record<string, string> = {
  "rebind.example": "10.0.0.1",
  "mapped.example": "::ffff:169.254.169.254",
};

describe("the address re-checked at each delivery", () => {
  let t: ConsoleTestApp;
  let projectId: number;
  beforeAll(async () => {
    t = await createConsoleTestApp({
      webhooks: {
        pollMs: 50,
        lookup: (host, cb) => {
          const a = DNS[host];
          if (!a) return cb(new Error(`ENOTFOUND ${host}`), []);
          cb(null, [{ address: a, family: a.includes(":") ? 6 : 4 }]);
        },
      },
    });
    projectId = (await createProject(t, [])).id;
  });
  afterAll(async () => t?.close());

  it.each([
    ["https://rebind.example/hook", /refused: rebind.example: 10.0.0.1 is a private address/],
    ["https://mapped.example/hook", /linkLocal/],
    ["https://10.1.1.1/hook", /private/],
    ["http://rebind.example/hook", /http:\/\/ only to a loopback address/],
  ])("%s is refused at delivery and retried", async (url, reason) => {
    // Written straight to the store, as if it had passed the check when it was registered.
    const hooks = new WebhooksRepo(t.store.accounts);
    const hook = await hooks.create(
      projectId,
      { url, description: "", eventTypes: [], filters: {}, enabled: true },
      (await t.store.changeLog.changeLogBounds()).newest,
      Date.now(),
      (id) => sealSecret(t.ctx.pepper, WEBHOOK_SECRET_PURPOSE, id, newWebhookSecret()),
    );
    await t.store.changeLog.appendChangeEvents([event(1)]);
    const queue = new WebhookQueueRepo(t.store.accounts);
    const log = await until("an attempt", async () => {
      const l = await queue.listAttempts(hook.id, 5);
      return l.length > 0 && l;
    });
    expect(log[0]).toMatchObject({ outcome: "refused", statusCode: null });
    expect(log[0]!.error).toMatch(reason);
    await hooks.delete(hook.id);
  });
});

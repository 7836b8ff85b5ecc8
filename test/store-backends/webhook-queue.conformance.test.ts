import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebhookQueueRepo } from "../../src/accounts/webhook-queue.repo.js";
import { WebhooksRepo } from "../../src/accounts/webhooks.repo.js";
import type { Store } from "../../src/store/store.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

const NOW = 1_800_000_000_000;
const input = {
  url: "https://hooks.example.com/x",
  description: "",
  eventTypes: [],
  filters: {},
  enabled: true,
};

describe.each(STORE_BACKENDS)("webhook queue ($name)", ({ open }) => {
  let store: Store;
  let second: Store;
  let cleanup: () => Promise<void>;
  let hookId: number;

  beforeEach(async () => {
    const opened = await open();
    store = opened.store;
    cleanup = opened.cleanup;
    second = await opened.second();
    const project = await store.projects.createProject({ name: "p" });
    const hook = await new WebhooksRepo(store.accounts).create(
      project.id,
      input,
      0,
      NOW,
      (id) => `sealed-${id}`,
    );
    hookId = hook.id;
    expect(hook.secretEnc).toBe(`sealed-${hook.id}`);
  });
  afterEach(async () => {
    await second.close();
    await cleanup();
  });

  const msg = (n: number, name: string) => ({
    webhookId: hookId,
    eventId: n,
    msgId: `msg_${n}`,
    eventType: "domain.updated",
    name,
    payload: `{"n":${n}}`,
    createdAt: NOW,
  });

  it("enqueues once per message id and leases each message to one deliverer across connections", async () => {
    const q1 = new WebhookQueueRepo(store.accounts);
    const q2 = new WebhookQueueRepo(second.accounts);
    const all = Array.from({ length: 40 }, (_, i) => msg(i + 1, `n${i}.wallet`));
    await q1.enqueue(all);
    await q2.enqueue(all.slice(0, 5)); // a second fan-out of the same events adds nothing
    expect(await q1.depth()).toBe(40);
    const [a, b] = await Promise.all([q1.claim("a", NOW, 15_000, 25), q2.claim("b", NOW, 15_000, 25)]);
    const ids = [...a, ...b].map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    // On SQLite both may pick the same candidates: the conditional update gives each to one only.
    const rest = await q1.claim("a", NOW, 15_000, 100);
    expect(new Set([...ids, ...rest.map((m) => m.id)]).size).toBe(40);
    // Leased: nobody else gets them until the lease runs out.
    expect(await q1.claim("c", NOW + 1_000, 15_000, 100)).toEqual([]);
    const again = await q2.claim("c", NOW + 16_000, 15_000, 100);
    expect(again.length).toBe(40);
    // The old owner cannot finish what it lost.
    expect(await q1.finish(again[0]!.id, "a", { status: "delivered", at: NOW })).toBe(false);
    expect(await q1.finish(again[0]!.id, "c", { status: "delivered", at: NOW })).toBe(true);
    expect(await q1.depth()).toBe(39);
  });

  it("keeps a name's messages in order: the next waits while an earlier one is pending", async () => {
    const q = new WebhookQueueRepo(store.accounts);
    await q.enqueue([msg(1, "a.wallet"), msg(2, "a.wallet"), msg(3, "b.wallet")]);
    const first = await q.claim("x", NOW, 15_000, 10);
    expect(first.map((m) => m.msgId)).toEqual(["msg_1", "msg_3"]);
    // msg_1 fails and is due again later: msg_2 still waits behind it.
    await q.finish(first[0]!.id, "x", { status: "pending", at: NOW, retryAt: NOW + 5_000 });
    expect(await q.claim("x", NOW + 1_000, 15_000, 10)).toEqual([]);
    const retry = await q.claim("x", NOW + 5_000, 15_000, 10);
    expect(retry.map((m) => [m.msgId, m.attempts])).toEqual([["msg_1", 1]]);
    await q.finish(retry[0]!.id, "x", { status: "delivered", at: NOW + 5_000 });
    expect((await q.claim("x", NOW + 5_000, 15_000, 10)).map((m) => m.msgId)).toEqual(["msg_2"]);
  });

  it("logs attempts newest first and advances a cursor only from the value read", async () => {
    const q = new WebhookQueueRepo(store.accounts);
    await q.enqueue([msg(1, "a.wallet")]);
    const [m] = await q.claim("x", NOW, 15_000, 1);
    for (const attempt of [1, 2])
      await q.logAttempt({
        webhookId: hookId,
        messageId: m!.id,
        msgId: m!.msgId,
        eventType: m!.eventType,
        attempt,
        at: NOW + attempt,
        statusCode: attempt === 1 ? 500 : 200,
        outcome: attempt === 1 ? "failed" : "delivered",
        latencyMs: 12,
        responseStart: "\u0000ok",
        error: null,
      });
    const log = await q.listAttempts(hookId, 10);
    expect(log.map((a) => [a.attempt, a.statusCode])).toEqual([
      [2, 200],
      [1, 500],
    ]);
    const hooks = new WebhooksRepo(store.accounts);
    expect(await hooks.advanceCursor(hookId, 0, 7)).toBe(true);
    expect(await new WebhooksRepo(second.accounts).advanceCursor(hookId, 0, 9)).toBe(false);
    expect((await hooks.findById(hookId))!.cursor).toBe(7);
  });

  it("prunes delivered and abandoned messages and old attempts, never pending ones", async () => {
    const q = new WebhookQueueRepo(store.accounts);
    await q.enqueue([msg(1, "a.wallet"), msg(2, "b.wallet"), msg(3, "c.wallet")]);
    const [m1, m2] = await q.claim("x", NOW, 15_000, 2);
    await q.finish(m1!.id, "x", { status: "delivered", at: NOW });
    await q.finish(m2!.id, "x", { status: "failed", at: NOW });
    await q.prune(NOW + 1);
    const left = await store.accounts.selectFrom("webhook_messages").select("msg_id").execute();
    expect(left.map((r) => r.msg_id)).toEqual(["msg_3"]);
    expect(await q.depth()).toBe(1);
  });
});

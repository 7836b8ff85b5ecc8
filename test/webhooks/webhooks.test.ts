import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANGE_TYPES, type ChangeEventWrite, type ChangeType } from "../../src/domain/change-events.js";
import { createProject, signedIn } from "../console/helpers/accounts.js";
import type { Agent, ConsoleTestApp } from "../console/helpers/console-app.js";
import { createConsoleTestApp } from "../console/helpers/console-app.js";
import { startReceiver, until } from "./receiver.js";

const TOKEN = `0x${"cd".repeat(32)}`;
const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
let block = 0;
function change(type: ChangeType, name: string, over: Partial<ChangeEventWrite> = {}): ChangeEventWrite {
  return {
    type,
    createdAt: Date.now(),
    sourceId: "fns-polygon",
    network: "POLYGON",
    provider: "NAMESPACE_A",
    tokenId: TOKEN,
    name,
    tld: name.split(".").at(-1)!,
    blockNumber: ++block,
    blockHash: TOKEN,
    txHash: TOKEN,
    blockTime: null,
    retracts: type === "change.retracted" ? 1 : null,
    projectId: null,
    payload: { state: { owner: OWNER, expiresAt: null, records: [] } },
    ...over,
  };
}

describe("webhooks: signed deliveries to a real receiver on 127.0.0.1", () => {
  let t: ConsoleTestApp;
  let owner: Agent;
  let admin: { email: string };
  let ownerEmail: string;
  let projectId: number;
  let skewMs = 0;
  const rx = startReceiver((path, seen) => {
    if (path === "/flaky") return { status: seen === 0 ? 500 : 200 };
    if (path === "/redirect") return { status: 302, headers: { location: "/ok" } };
    if (path === "/slow") return { status: 200, hang: true };
    if (path === "/down") return { status: 503 };
    return { status: 200 };
  });
  let receiver: Awaited<typeof rx>;

  beforeAll(async () => {
    receiver = await rx;
    t = await createConsoleTestApp({
      webhooks: { pollMs: 50, timeoutMs: 500, clock: () => Date.now() + skewMs },
    });
    const o = await signedIn(t, "hook-owner");
    const a = await signedIn(t, "hook-admin");
    owner = o.agent;
    ownerEmail = o.email;
    admin = a;
    projectId = (
      await createProject(t, [
        { id: o.id, role: "owner" },
        { id: a.id, role: "admin" },
      ])
    ).id;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  async function createHook(path: string, extra: Record<string, unknown> = {}) {
    const res = await owner.post(`projects/${projectId}/webhooks`, { url: receiver.url(path), ...extra });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers["cache-control"]).toContain("no-store");
    const { webhook, secret } = res.json().data;
    expect(secret).toMatch(/^whsec_/);
    expect(JSON.stringify(webhook)).not.toContain(secret);
    receiver.secrets.set(path, secret);
    return webhook as { id: number; enabled: boolean };
  }

  it("delivers each event type, signed per Standard Webhooks, in order per name", async () => {
    const hook = await createHook("/ok");
    const listed = (await owner.get(`projects/${projectId}/webhooks`)).json().data;
    expect(JSON.stringify(listed)).not.toContain("whsec_");
    const events = CHANGE_TYPES.map((type) => change(type, "alice.wallet"));
    await t.store.changeLog.appendChangeEvents(events);
    const got = await until("every type", () => {
      const r = receiver.received.filter((x) => x.path === "/ok");
      return r.length >= CHANGE_TYPES.length && r;
    });
    expect(got.map((r) => r.json.type)).toEqual([...CHANGE_TYPES]);
    for (const r of got) {
      expect(r.verified).toBe(true);
      expect(r.headers["webhook-id"]).toMatch(/^evt_\d+$/);
      expect(r.json.data.domain).toBe("alice.wallet");
    }
    // A tampered body does not verify with the same headers (the receiver's check is real).
    const { Webhook } = await import("standardwebhooks");
    expect(() =>
      new Webhook(receiver.secrets.get("/ok")!).verify(`${got[0]!.body} `, got[0]!.headers),
    ).toThrow();
    // The receiver may have the request before the deliverer has logged its answer.
    const log = await until("the log", async () => {
      const l = (await owner.get(`projects/${projectId}/webhooks/${hook.id}/deliveries`)).json().data;
      return l.length >= CHANGE_TYPES.length && l;
    });
    expect(log.length).toBe(CHANGE_TYPES.length);
    expect(log[0]).toMatchObject({ outcome: "delivered", statusCode: 200, attempt: 1 });
    expect(log[0].responseStart.length).toBeLessThanOrEqual(512);
    expect(log[0].responseStart).toMatch(/^answer 200 z+$/);
    // Filters and types apply: only bob.wallet's domain.updated reaches this one.
    await owner.delete(`projects/${projectId}/webhooks/${hook.id}`);
  });

  it("filters by name and type", async () => {
    await createHook("/filtered", { eventTypes: ["domain.updated"], filters: { domains: ["bob.wallet"] } });
    await t.store.changeLog.appendChangeEvents([
      change("domain.updated", "carol.wallet"),
      change("domain.created", "bob.wallet"),
      change("domain.updated", "bob.wallet"),
    ]);
    await until("bob's update", () => receiver.received.some((x) => x.path === "/filtered"));
    await new Promise((r) => setTimeout(r, 300));
    const got = receiver.received.filter((x) => x.path === "/filtered");
    expect(got.map((r) => [r.json.type, r.json.data.domain])).toEqual([["domain.updated", "bob.wallet"]]);
  });

  it("retries a receiver that answers 500, then 200", async () => {
    const hook = await createHook("/flaky");
    await t.store.changeLog.appendChangeEvents([change("domain.updated", "flaky.wallet")]);
    await until("the retry", () => receiver.received.filter((x) => x.path === "/flaky").length >= 2, 20_000);
    const got = receiver.received.filter((x) => x.path === "/flaky");
    expect(got.every((r) => r.verified)).toBe(true);
    expect(got[0]!.headers["webhook-id"]).toBe(got[1]!.headers["webhook-id"]);
    const log = await until("the log of both attempts", async () => {
      const l = (await owner.get(`projects/${projectId}/webhooks/${hook.id}/deliveries`)).json().data;
      return l.length >= 2 && l;
    });
    expect(
      log.map((a: { attempt: number; statusCode: number; outcome: string }) => [
        a.attempt,
        a.statusCode,
        a.outcome,
      ]),
    ).toEqual([
      [2, 200, "delivered"],
      [1, 500, "failed"],
    ]);
  });

  it("does not follow a redirect, and gives a hanging receiver up after the timeout (both retried)", async () => {
    const redirect = await createHook("/redirect");
    const slow = await createHook("/slow");
    await t.store.changeLog.appendChangeEvents([change("domain.updated", "moved.wallet")]);
    await until("the redirect's attempt", () => receiver.received.some((x) => x.path === "/redirect"));
    const log = async (id: number) =>
      (await owner.get(`projects/${projectId}/webhooks/${id}/deliveries`)).json().data;
    const r = await until(
      "the redirect's log",
      async () => (await log(redirect.id)).length > 0 && (await log(redirect.id)),
    );
    expect((await r)[0]).toMatchObject({
      statusCode: 302,
      outcome: "failed",
      error: "redirect not followed",
    });
    const s = await until(
      "the timeout's log",
      async () => (await log(slow.id)).length > 0 && (await log(slow.id)),
    );
    expect((await s)[0]).toMatchObject({ statusCode: null, outcome: "failed" });
    expect((await s)[0].error).toMatch(/timed out/);
    // The redirect's target was never asked for by the deliverer.
    expect(receiver.received.filter((x) => x.path === "/ok").length).toBe(CHANGE_TYPES.length);
    await owner.delete(`projects/${projectId}/webhooks/${redirect.id}`);
    await owner.delete(`projects/${projectId}/webhooks/${slow.id}`);
  });

  it("sends a test event and rotates the secret", async () => {
    const hook = await createHook("/test");
    const res = await owner.post(`projects/${projectId}/webhooks/${hook.id}/test`);
    expect(res.json().data).toMatchObject({ outcome: "delivered", statusCode: 200 });
    const first = receiver.received.filter((x) => x.path === "/test");
    expect(first.map((r) => [r.json.type, r.verified])).toEqual([["webhook.test", true]]);
    const rotated = (await owner.post(`projects/${projectId}/webhooks/${hook.id}/rotate-secret`)).json().data;
    expect(rotated.secret).not.toBe(receiver.secrets.get("/test"));
    await owner.post(`projects/${projectId}/webhooks/${hook.id}/test`);
    const second = receiver.received.filter((x) => x.path === "/test")[1]!;
    expect(second.verified).toBe(false); // signed with the new secret now
    receiver.secrets.set("/test", rotated.secret);
    await owner.post(`projects/${projectId}/webhooks/${hook.id}/test`);
    expect(receiver.received.filter((x) => x.path === "/test")[2]!.verified).toBe(true);
  });

  it("disables an endpoint failing for WEBHOOK_RETRY_HOURS and mails the owners and admins", async () => {
    const hook = await createHook("/down");
    await t.store.changeLog.appendChangeEvents([change("domain.updated", "down.wallet")]);
    await until(
      "a failure logged",
      async () =>
        (await owner.get(`projects/${projectId}/webhooks/${hook.id}/deliveries`)).json().data.length > 0,
    );
    skewMs = 25 * 3_600_000; // a day later, the message is due again and fails again
    try {
      const mail = await t.smtp.waitFor(admin.email, /webhook of .* was disabled/);
      expect(mail.text).toContain(receiver.url("/down"));
      await t.smtp.waitFor(ownerEmail, /webhook of .* was disabled/);
      const listed = (await owner.get(`projects/${projectId}/webhooks`)).json().data;
      const h = listed.find((x: { id: number }) => x.id === hook.id);
      expect(h).toMatchObject({ enabled: false });
      expect(h.disabledReason).toMatch(/HTTP 503/);
    } finally {
      skewMs = 0;
    }
  });
});

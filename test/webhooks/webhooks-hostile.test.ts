import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, signedIn } from "../console/helpers/accounts.js";
import type { Agent, ConsoleTestApp } from "../console/helpers/console-app.js";
import { createConsoleTestApp } from "../console/helpers/console-app.js";

describe("hostile input on the webhook routes: a clear 4xx, never a 5xx", () => {
  let t: ConsoleTestApp;
  let owner: Agent;
  let projectId: number;
  let strict: ConsoleTestApp;
  let strictOwner: Agent;
  let strictProject: number;

  beforeAll(async () => {
    t = await createConsoleTestApp({ webhooks: { deliver: false } });
    const o = await signedIn(t, "hostile-owner");
    owner = o.agent;
    projectId = (await createProject(t, [{ id: o.id, role: "owner" }])).id;
    // A production-like process: loopback refused.
    strict = await createConsoleTestApp({
      config: { webhookAllowLoopback: false },
      webhooks: { deliver: false },
    });
    const s = await signedIn(strict, "strict-owner");
    strictOwner = s.agent;
    strictProject = (await createProject(strict, [{ id: s.id, role: "owner" }])).id;
  });
  afterAll(async () => {
    await t?.close();
    await strict?.close();
  });

  const cases: Array<[string, unknown, number, string, RegExp?]> = [
    ["no url", {}, 400, "MISSING_PARAMETER"],
    ["not a URL", { url: "not a url" }, 400, "INVALID_PARAMETER", /not an absolute URL/],
    ["ftp", { url: "ftp://127.0.0.1/x" }, 400, "INVALID_PARAMETER", /https/],
    ["private address", { url: "https://10.0.0.1/x" }, 400, "INVALID_PARAMETER", /private/],
    ["link-local metadata", { url: "https://169.254.169.254/latest" }, 400, "INVALID_PARAMETER", /linkLocal/],
    [
      "an IPv4-mapped private address",
      { url: "http://[::ffff:10.0.0.1]/" },
      400,
      "INVALID_PARAMETER",
      /private/,
    ],
    ["credentials in the URL", { url: "https://u:p@127.0.0.1/" }, 400, "INVALID_PARAMETER", /user name/],
    ["too long", { url: `https://127.0.0.1/${"a".repeat(3000)}` }, 400, "PARAMETER_TOO_LONG"],
    ["url not a string", { url: 42 }, 400, "INVALID_PARAMETER"],
    [
      "unknown type",
      { url: "http://127.0.0.1:9/", eventTypes: ["domain.exploded"] },
      400,
      "INVALID_PARAMETER",
      /unknown type/,
    ],
    [
      "unknown filter",
      { url: "http://127.0.0.1:9/", filters: { colours: ["red"] } },
      400,
      "INVALID_PARAMETER",
    ],
    [
      "bad network",
      { url: "http://127.0.0.1:9/", filters: { networks: ["MARS"] } },
      400,
      "INVALID_PARAMETER",
      /networks/,
    ],
    [
      "1,001 filter values",
      { url: "http://127.0.0.1:9/", filters: { tlds: Array.from({ length: 1001 }, (_, i) => `t${i}`) } },
      400,
      "PARAMETER_TOO_LONG",
    ],
    [
      "1,000 values over two filters plus one",
      {
        url: "http://127.0.0.1:9/",
        filters: {
          tlds: Array.from({ length: 600 }, (_, i) => `t${i}`),
          domains: Array.from({ length: 401 }, (_, i) => `n${i}.wallet`),
        },
      },
      400,
      "PARAMETER_TOO_LONG",
    ],
    [
      "a comma inside a value",
      { url: "http://127.0.0.1:9/", filters: { tlds: ["a,b"] } },
      400,
      "INVALID_PARAMETER",
    ],
    ["a body that is not an object", [], 400, "BAD_REQUEST"],
    ["filters not an object", { url: "http://127.0.0.1:9/", filters: ["tlds"] }, 400, "INVALID_PARAMETER"],
  ];
  it.each(cases)("%s → %i %s", async (_name, body, status, code, message) => {
    const res = await owner.post(`projects/${projectId}/webhooks`, body);
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json().error.code).toBe(code);
    if (message) expect(res.json().error.message).toMatch(message);
  });

  it("accepts 1,000 filter values", async () => {
    const res = await owner.post(`projects/${projectId}/webhooks`, {
      url: "http://127.0.0.1:9/",
      filters: { addresses: Array.from({ length: 1000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`) },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.webhook.filters.addresses).toHaveLength(1000);
  });

  it("refuses loopback when the operator does not allow it", async () => {
    for (const url of [
      "http://127.0.0.1:9/",
      "https://127.0.0.1:9/",
      "https://[::1]/",
      "https://localhost/",
    ]) {
      const res = await strictOwner.post(`projects/${strictProject}/webhooks`, { url });
      expect(res.statusCode, `${url} ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe("INVALID_PARAMETER");
    }
  });

  it("answers 404 for a webhook of another project or that does not exist, 400 for a bad id", async () => {
    const other = await owner.post(`projects/${projectId}/webhooks`, { url: "http://127.0.0.1:9/" });
    const id = other.json().data.webhook.id as number;
    const p2 = (await createProject(t, [])).id;
    expect(
      (await owner.patch(`projects/${projectId}/webhooks/999999`, { description: "x" })).statusCode,
    ).toBe(404);
    expect((await owner.delete(`projects/${p2}/webhooks/${id}`)).statusCode).toBe(404);
    expect((await owner.get(`projects/${projectId}/webhooks/abc/deliveries`)).statusCode).toBe(400);
    expect((await owner.get(`projects/${projectId}/webhooks/${id}/deliveries?limit=100000`)).statusCode).toBe(
      400,
    );
    const patched = await owner.patch(`projects/${projectId}/webhooks/${id}`, {
      url: "https://192.168.1.1/",
    });
    expect(patched.statusCode).toBe(400);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadUsage } from "../../src/accounts/usage.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR, NOW } from "./helpers/world.js";

const V1 = "/svc/api/v1";

interface Item {
  input: string;
  result: boolean;
  data?: unknown;
  error?: { code: string; message: string };
}

function post(t: TestApp, path: string, payload: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: "POST",
    url: `${V1}/batch/${path}`,
    headers: { "api-key": t.key, "content-type": "application/json", ...headers },
    payload: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

describe.each<Backend>(["sqlite", "postgres"])("batch calls: %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers resolve per input, in input order, each item what the single endpoint answers", async () => {
    const inputs = [
      "bob.eth",
      "nobody.wallet",
      "ALICE.wallet ",
      "not a name",
      "",
      "alice.wallet",
      "x".repeat(1100),
    ];
    const res = await post(t, "resolve", { domains: inputs });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
    const body = res.json() as { result: boolean; data: Item[] };
    expect(body.result).toBe(true);
    expect(body.data.map((i) => i.input)).toEqual(inputs);
    for (const [i, item] of body.data.entries()) {
      const single = await t.get(`${V1}/resolve?domain=${encodeURIComponent(inputs[i])}`);
      if (single.statusCode === 200) {
        expect(item).toEqual({ input: inputs[i], result: true, data: single.json().data });
      } else {
        expect(item.result).toBe(false);
        expect(item.error?.code).toBe(single.json().error.code);
      }
    }
    expect(body.data.map((i) => i.error?.code ?? "ok")).toEqual([
      "ok",
      "DOMAIN_NOT_FOUND",
      "ok",
      "INVALID_DOMAIN",
      "MISSING_PARAMETER",
      "ok",
      "PARAMETER_TOO_LONG",
    ]);
    // An item's message names the input by its place in the array.
    expect(body.data[3].error?.message).toContain('"domains[3]"');
    expect(body.data[4].error?.message).toBe('The input "domains[4]" is empty.');
  });

  it("answers deep-resolve and reverse-resolve per input with the single endpoints' data", async () => {
    const names = ["alice.wallet", "nobody.wallet", "bob.eth"];
    const deep = (await post(t, "deep-resolve", { domains: names })).json() as { data: Item[] };
    for (const [i, name] of names.entries())
      expect(deep.data[i]).toEqual({
        input: name,
        result: true,
        data: (await t.get(`${V1}/deep-resolve?domain=${name}`)).json().data,
      });
    expect((deep.data[1].data as unknown[]).length).toBe(0);

    const addresses = [ADDR.bob, "0xZZ", ADDR.alice.toUpperCase().replace("0X", "0x")];
    const rev = (await post(t, "reverse-resolve", { walletAddresses: addresses })).json() as { data: Item[] };
    expect(rev.data.map((i) => i.input)).toEqual(addresses);
    expect(rev.data[0].data).toEqual(
      (await t.get(`${V1}/reverse-resolve?walletAddress=${ADDR.bob}`)).json().data,
    );
    expect(rev.data[1]).toMatchObject({ result: false, error: { code: "INVALID_ADDRESS" } });
    expect(rev.data[1].error?.message).toContain('"walletAddresses[1]"');
    expect(rev.data[2].data).toEqual(
      (await t.get(`${V1}/reverse-resolve?walletAddress=${ADDR.alice}`)).json().data,
    );
  });

  it("applies network and provider, aliases included, to every input", async () => {
    const res = await post(t, "deep-resolve", {
      domains: ["alice.wallet", "bob.eth"],
      network: "matic",
      provider: "fns",
    });
    const data = (res.json() as { data: Item[] }).data;
    const single = (
      await t.get(`${V1}/deep-resolve?domain=alice.wallet&network=POLYGON&provider=NAMESPACE_A`)
    ).json().data;
    expect(data[0].data).toEqual(single);
    expect(data[1].data).toEqual([]);
  });

  it("counts a batch's names against the quota and shows batch calls in the usage statistics", async () => {
    const before = await t.services.limits.quotaUsed(t.projectId);
    const res = await post(t, "resolve", { domains: ["alice.wallet", "bob.eth", "nobody.wallet"] });
    expect(res.statusCode).toBe(200);
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(before + 3);
    await t.get(`${V1}/resolve?domain=alice.wallet`);
    await t.services.usage.flush();
    const usage = await loadUsage(t.store.accounts, t.projectId, NOW);
    const batch = usage.endpoints.find((e) => e.endpoint === "batch-resolve");
    expect(batch).toMatchObject({ batches: batch?.requests });
    expect(batch?.names).toBeGreaterThanOrEqual(3);
    const single = usage.endpoints.find((e) => e.endpoint === "resolve");
    expect(single?.names).toBe(single?.requests);
    expect(usage.totals.names).toBe(usage.endpoints.reduce((n, e) => n + e.names, 0));
    // The console's dashboard answer carries them (its schema keeps only declared fields).
    const dash = await t.services.projects.dashboard(t.projectId);
    expect(dash.totals.batches).toBeGreaterThanOrEqual(1);
    expect(dash.endpoints.find((e) => e.endpoint === "batch-resolve")?.names).toBe(batch?.names);
  });
});

describe("batch bodies that are refused before any work", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const many = (n: number) => Array.from({ length: n }, (_, i) => `n${i}.wallet`);
  it.each<[string, string, unknown, number, string, string]>([
    ["not JSON", "resolve", "{domains: [", 400, "BAD_REQUEST", ""],
    ["a JSON array", "resolve", '["alice.wallet"]', 400, "BAD_REQUEST", "JSON object"],
    ["a JSON string", "resolve", '"alice.wallet"', 400, "BAD_REQUEST", "JSON object"],
    ["null", "resolve", "null", 400, "BAD_REQUEST", "JSON object"],
    ["no domains", "resolve", {}, 400, "MISSING_PARAMETER", '"domains"'],
    [
      "walletAddresses to resolve",
      "resolve",
      { walletAddresses: [ADDR.bob] },
      400,
      "MISSING_PARAMETER",
      '"domains"',
    ],
    ["domains a string", "deep-resolve", { domains: "alice.wallet" }, 400, "INVALID_PARAMETER", '"domains"'],
    [
      "domains an object",
      "resolve",
      { domains: { 0: "alice.wallet" } },
      400,
      "INVALID_PARAMETER",
      '"domains"',
    ],
    ["domains empty", "resolve", { domains: [] }, 400, "INVALID_PARAMETER", '"domains" is empty'],
    ["1,001 domains", "resolve", { domains: many(1001) }, 400, "INVALID_PARAMETER", "1001"],
    [
      "a number among the domains",
      "resolve",
      { domains: ["a.wallet", 7] },
      400,
      "INVALID_PARAMETER",
      '"domains[1]"',
    ],
    [
      "a null among the addresses",
      "reverse-resolve",
      { walletAddresses: [null] },
      400,
      "INVALID_PARAMETER",
      '"walletAddresses[0]"',
    ],
    [
      "network a number",
      "resolve",
      { domains: ["a.wallet"], network: 1 },
      400,
      "INVALID_PARAMETER",
      '"network"',
    ],
    [
      "network unknown",
      "resolve",
      { domains: ["a.wallet"], network: "MOON" },
      400,
      "INVALID_NETWORK",
      'field "network"',
    ],
    [
      "provider unknown",
      "reverse-resolve",
      { walletAddresses: [ADDR.bob], provider: "x" },
      400,
      "INVALID_PROVIDER",
      'field "provider"',
    ],
    [
      "a __proto__ key (poisoning)",
      "resolve",
      '{"__proto__":{"domains":["a.wallet"]}}',
      400,
      "BAD_REQUEST",
      "",
    ],
    ["over 1 MiB", "resolve", { domains: ["a".repeat(1024 * 1024)] }, 413, "PAYLOAD_TOO_LARGE", ""],
  ])(
    "%s: a 4xx naming the field, counted as one request",
    async (_label, path, payload, status, code, text) => {
      const before = await t.services.limits.quotaUsed(t.projectId);
      const res = await post(t, path, payload);
      expect(res.statusCode).toBe(status);
      expect(res.json().error.code).toBe(code);
      expect(res.json().error.message).toContain(text);
      // It did no work, but it is a request: one, as a single request with a bad parameter.
      expect(await t.services.limits.quotaUsed(t.projectId)).toBe(before + 1);
      expect(res.headers.ratelimit).toBeDefined();
    },
  );

  it("1,000 domains are accepted", async () => {
    const res = await post(t, "resolve", { domains: many(1000) });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toHaveLength(1000);
  });

  it("a body of another content type is refused; the key is checked before the body", async () => {
    const text = await post(t, "resolve", "domains", { "content-type": "text/plain" });
    expect(text.statusCode).toBe(400);
    const xml = await post(t, "resolve", "<a/>", { "content-type": "application/xml" });
    expect(xml.statusCode).toBe(415);
    const before = await t.services.limits.quotaUsed(t.projectId);
    const noKey = await t.app.inject({
      method: "POST",
      url: `${V1}/batch/resolve`,
      payload: "{",
      headers: { "content-type": "application/json" },
    });
    expect(noKey.statusCode).toBe(401);
    expect(noKey.json().error.code).toBe("API_KEY_MISSING");
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(before); // no key: no project to count
    const get = await t.get(`${V1}/batch/resolve`);
    expect(get.statusCode).toBe(405);
  });
});

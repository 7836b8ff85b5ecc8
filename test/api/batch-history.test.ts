import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR } from "./helpers/world.js";

const V1 = "/svc/api/v1";

interface Item {
  input: string;
  result: boolean;
  data?: unknown;
  error?: { code: string; message: string };
}

function post(t: TestApp, path: string, payload: unknown) {
  return t.app.inject({
    method: "POST",
    url: `${V1}/batch/${path}`,
    headers: { "api-key": t.key, "content-type": "application/json" },
    payload: JSON.stringify(payload),
  });
}

/** provenance, at and atBlock on a batch call's URL reach every item as they reach a single request. */
describe.each<Backend>(["sqlite", "postgres"])(
  "batch calls with provenance and time travel: %s",
  (backend) => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend });
    });
    afterAll(async () => {
      await t?.close();
    });

    it.each([
      ["resolve", "domains", ["alice.wallet", "bob.eth", "nobody.wallet"], "domain"],
      ["deep-resolve", "domains", ["alice.wallet", "bob.eth"], "domain"],
      ["reverse-resolve", "walletAddresses", [ADDR.alice, ADDR.bob], "walletAddress"],
    ])(
      "%s?provenance=true: each item equals the single endpoint's answer",
      async (path, field, inputs, param) => {
        const res = await post(t, `${path}?provenance=true`, { [field]: inputs });
        expect(res.statusCode).toBe(200);
        const items = (res.json() as { data: Item[] }).data;
        for (const [i, item] of items.entries()) {
          const single = await t.get(
            `${V1}/${path}?${param}=${encodeURIComponent(inputs[i])}&provenance=true`,
          );
          if (single.statusCode === 200)
            expect(item).toEqual({ input: inputs[i], result: true, data: single.json().data });
          else expect(item.error?.code).toBe(single.json().error.code);
        }
        expect(JSON.stringify(items)).toContain('"provenance"');
      },
    );

    it("a time in the future is each item's AT_AFTER_INDEX, as for a single request", async () => {
      const res = await post(t, "resolve?at=2999-01-01T00:00:00Z", { domains: ["alice.wallet", "bob.eth"] });
      expect(res.statusCode).toBe(200);
      const single = await t.get(`${V1}/resolve?domain=alice.wallet&at=2999-01-01T00:00:00Z`);
      const items = (res.json() as { data: Item[] }).data;
      expect(items.map((i) => i.error?.code)).toEqual([single.json().error.code, single.json().error.code]);
    });

    it.each([
      ["at=yesterday", "at"],
      ["atBlock=POLYGON:-1", "atBlock"],
      ["at=2024-01-01&atBlock=POLYGON:5", "atBlock"],
      ["provenance=maybe", "provenance"],
    ])(
      "a bad option (%s) refuses the whole batch with 400 naming it, before any work",
      async (query, name) => {
        const res = await post(t, `resolve?${query}`, { domains: ["alice.wallet"] });
        expect(res.statusCode).toBe(400);
        expect(res.json().error.message).toContain(`"${name}"`);
      },
    );
  },
);

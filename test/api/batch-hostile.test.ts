import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../../src/domain/errors.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR } from "./helpers/world.js";

const V1 = "/svc/api/v1";

/** mulberry32: the same corpus on every run, so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(0xba7c4);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const FRAGMENTS = [
  "alice.wallet",
  "bob.eth",
  ADDR.bob,
  ADDR.alice.toUpperCase(),
  "0x",
  "xn--caf-dma.wallet",
  "xn--zz",
  "\u0000",
  "\ud800",
  "\u202e",
  "\u200b",
  "..",
  ".",
  " ",
  "é",
  "🚀",
  "a".repeat(300),
  "%00",
  "<script>",
  '"',
  "\\",
  "__proto__",
  "constructor",
];

function item(): unknown {
  const r = rand();
  if (r < 0.75) return Array.from({ length: int(0, 5) }, () => pick(FRAGMENTS)).join(pick(["", ".", " "]));
  if (r < 0.8) return pick(FRAGMENTS).repeat(int(50, 200));
  return pick<unknown>([null, 1, -0, 1e308, true, {}, [], ["a"], { toString: "x" }]);
}

function body(): unknown {
  const field = pick(["domains", "walletAddresses", "domain", "__proto__", "DOMAINS"]);
  const list = rand() < 0.85 ? Array.from({ length: int(0, 40) }, item) : item();
  const b: Record<string, unknown> = { [field]: list };
  if (rand() < 0.4) b.network = rand() < 0.7 ? pick(["polygon", "ETH", "moon", "", " ", "\u0000"]) : item();
  if (rand() < 0.4) b.provider = rand() < 0.7 ? pick(["fns", "NAMESPACE_C", "x", ""]) : item();
  if (rand() < 0.1) b.extra = item();
  return rand() < 0.05 ? list : b;
}

function raw(): string {
  return pick([
    "",
    "{",
    "[",
    "nul",
    '{"domains":[',
    '{"domains":["a.wallet"],}',
    '{"domains":["\\ud800"]}',
    '{"domains":"\\u0000"}',
    "\u0000\u0001",
    `{"domains":[${'"a.wallet",'.repeat(50)}"b.wallet"]}`,
    '{"constructor":{"prototype":{"domains":["a.wallet"]}}}',
  ]);
}

describe("batch calls under hostile bodies", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("answers 600 generated bodies without a 5xx, one item per input in order, and counts each input once (a refused body as one request)", async () => {
    const quota0 = await t.services.limits.quotaUsed(t.projectId);
    let charged = 0;
    for (let i = 0; i < 600; i++) {
      const path = pick(["resolve", "deep-resolve", "reverse-resolve"]);
      const b = rand() < 0.15 ? raw() : body();
      const payload = typeof b === "string" ? b : JSON.stringify(b);
      const res = await t.app.inject({
        method: "POST",
        url: `${V1}/batch/${path}`,
        headers: { "api-key": t.key, "content-type": "application/json" },
        payload,
      });
      expect(res.statusCode, `${path} ${payload.slice(0, 200)}`).toBeLessThan(500);
      const out = res.json() as {
        result: boolean;
        data?: Array<{ input: string; result: boolean; error?: { code: string } }>;
        error?: { code: string; message: string };
      };
      if (res.statusCode !== 200) {
        charged += 1; // a refused body counts as one request
        expect(out.result).toBe(false);
        expect(Object.keys(ERROR_CODES)).toContain(out.error?.code);
        continue;
      }
      const field = path === "reverse-resolve" ? "walletAddresses" : "domains";
      const inputs = (JSON.parse(payload) as Record<string, string[]>)[field];
      expect(out.data?.map((d) => d.input)).toEqual(inputs);
      for (const d of out.data ?? [])
        if (!d.result)
          expect(ERROR_CODES[d.error?.code as keyof typeof ERROR_CODES].status).toBeLessThan(500);
      charged += inputs.length;
    }
    expect(charged).toBeGreaterThan(100);
    expect(await t.services.limits.quotaUsed(t.projectId)).toBe(quota0 + charged);
  });
});

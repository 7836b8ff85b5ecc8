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

const rand = rng(0x0dd5eed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const enc = encodeURIComponent;

// Fragments an attacker tries; each is percent-encoded (or raw) in the query.
const BAD_ESCAPES = [
  "%C3%28",
  "%FF",
  "%80",
  "%ED%A0%80",
  "%F4%90%80%80",
  "%C0%AF",
  "%E2%82",
  "%",
  "%G1",
  "%%",
  "%0",
];
const CONTROLS = [..."\u0000\u0001\u0007\b\t\n\u000b\f\r\u001b\u007f\u0085"].map(enc);
const INVISIBLES = [
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u202e",
  "\u2066",
  "\u00ad",
  "\u180e",
  "\u3164",
].map(enc);
const SQL = [
  "' OR 1=1--",
  '"; DROP TABLE domains;--',
  "alice.wallet' UNION SELECT * FROM api_keys--",
  "1;select pg_sleep(10)",
  "%' AND name LIKE '%",
];
const PATHS = [
  "../../etc/passwd",
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e%2f%2e%2e%2f",
  "/svc/api/v1/resolve",
  "C:\\windows\\win.ini",
  "file:///etc/passwd",
];
const WEIRD_NAMES = [
  "alice",
  ".",
  "..",
  "a..b",
  ".wallet",
  "alice.",
  " ",
  "xn--",
  "xn--zz.eth",
  "xn--alice-.eth",
  "-",
  "*.eth",
  "a b.eth",
  "a/b.eth",
  "a@b.eth",
  "<script>.eth",
];
const BAD_ADDRESSES = [
  "0x",
  "0x1234",
  `0x${"a".repeat(39)}`,
  `0x${"a".repeat(41)}`,
  `0x${"g".repeat(40)}`,
  `0X${"a".repeat(39)}z`,
  `${"a".repeat(40)}0x`,
  `0x${"٣".repeat(40)}`,
  `0x${"a".repeat(20)}\u200b${"a".repeat(20)}`,
  "alice.wallet",
  "null",
  "undefined",
  "[object Object]",
  "0x0",
  "-1",
];
const BAD_VALUES = [
  "MARS",
  "ETHEREUMX",
  "NAMESPACE_Z",
  "__proto__",
  "constructor",
  "toString",
  "ｅｔｈ",
  "1",
  "-1",
  "null",
  "[]",
  "{}",
  "E",
  "eth\u0000",
  "ETH%00",
  "polygon;drop",
];

/** A domain that normalization must refuse. */
function badDomain(): string {
  switch (int(0, 8)) {
    case 0:
      return `${"a".repeat(int(1025, 6000))}.eth`;
    case 1:
      return `${"a.".repeat(int(255, 900))}eth`;
    case 2:
      return `al${pick(BAD_ESCAPES.slice(0, 7))}ice.wallet`;
    case 3:
      return `al${pick(CONTROLS)}ice.wallet`;
    case 4:
      return `al${pick(INVISIBLES)}ice.${pick(["wallet", "eth", "crypto"])}`;
    case 5:
      return enc(pick(SQL));
    case 6:
      return enc(pick(PATHS));
    case 7:
      return enc(pick(WEIRD_NAMES));
    default:
      return `${"%C3%A9".repeat(int(520, 1300))}.eth`;
  }
}

/** Extra parameters an attacker adds; harmless on their own. */
function noise(): string {
  const parts: string[] = [];
  for (let i = int(0, 3); i > 0; i--) {
    parts.push(
      pick([
        `__proto__=${enc(pick(SQL))}`,
        "constructor=x",
        `x${pick(BAD_ESCAPES)}=1`,
        `utm=${"z".repeat(int(1, 300))}`,
        `${enc(pick(PATHS))}=1`,
        "&&&",
        "=",
      ]),
    );
  }
  return parts.join("&");
}

/** One query that must be refused, for each endpoint. */
function badQuery(endpoint: string): string {
  const name = endpoint === "reverse-resolve" ? "walletAddress" : pick(["domain", "fullQualifiedDomain"]);
  const good = endpoint === "reverse-resolve" ? ADDR.bob : "alice.wallet";
  const kind = int(0, 8);
  let q: string;
  if (kind <= 2) q = `${name}=${endpoint === "reverse-resolve" ? enc(pick(BAD_ADDRESSES)) : badDomain()}`;
  else if (kind === 3) q = `${name}=${good}&network=${enc(pick(BAD_VALUES))}`;
  else if (kind === 4) q = `${name}=${good}&provider=${enc(pick(BAD_VALUES))}${pick(["", "%FF", "%C3%28"])}`;
  else if (kind === 5)
    q = Array.from({ length: int(2, 2000) }, (_, i) => `${name}=${i % 2 ? good : "b.eth"}`).join("&");
  else if (kind === 6) q = `${name}=${good}&pad=${"x".repeat(int(8200, 20_000))}`;
  else if (kind === 8) {
    // provenance, at, atBlock: hostile values, both time parameters, points the index cannot answer
    const bad = BAD_VALUES.filter((v) => v !== "1");
    q = `${name}=${good}&${pick([
      `provenance=${enc(pick(bad))}`,
      `at=${enc(pick([...bad, "2024-13-01", "2024-05-01T12:00", "9999-12-31T23:59:59Z", "1970-01-01"]))}`,
      `atBlock=${enc(pick([...bad, "POLYGON:-5", "POLYGON:1e9", `POLYGON:${"9".repeat(40)}`, "POLYGON:5", "MARS:1"]))}`,
      "at=2024-05-01&atBlock=POLYGON:1",
      `atBlock=POLYGON:1&network=ETHEREUM`,
    ])}`;
  } else q = pick([`network=ETHEREUM&provider=ENS`, `${name}=`, `${name.toUpperCase()}=${good}`, `${name}`]);
  const n = noise();
  return n ? (rand() < 0.5 ? `${q}&${n}` : `${n}&${q}`) : q;
}

describe("hostile input", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  function checkRefusal(
    res: { statusCode: number; headers: Record<string, unknown>; json(): unknown },
    label: string,
  ) {
    expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, label).toBeLessThan(500);
    expect(res.headers["content-type"], label).toMatch(/^application\/json/);
    const body = res.json() as { result: boolean; error: { code: string; message: string } };
    expect(body.result, label).toBe(false);
    expect(Object.keys(body).sort(), label).toEqual(["error", "result"]);
    expect(Object.keys(ERROR_CODES), label).toContain(body.error.code);
    expect(ERROR_CODES[body.error.code as keyof typeof ERROR_CODES].status, label).toBe(res.statusCode);
    expect(typeof body.error.message, label).toBe("string");
  }

  it.each(["resolve", "deep-resolve", "reverse-resolve"])(
    "refuses 1,200 generated bad queries to %s with a 4xx envelope",
    async (endpoint) => {
      const codes = new Map<string, number>();
      for (let i = 0; i < 1200; i++) {
        const url = `${V1}/${endpoint}?${badQuery(endpoint)}`;
        const res = await t.get(url);
        checkRefusal(res, url.slice(0, 300));
        const code = (res.json() as { error: { code: string } }).error.code;
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
      // The corpus reaches the distinct refusals, not one catch-all.
      expect(codes.size).toBeGreaterThanOrEqual(endpoint === "reverse-resolve" ? 5 : 6);
    },
  );

  it("refuses header abuse with 401", async () => {
    const headers: Array<Record<string, string | string[]>> = [
      { "api-key": "k".repeat(10_000) },
      { "api-key": `${t.key}${"x".repeat(10_000)}` },
      { "api-key": [t.key, t.key] },
      { "api-key": `${t.key} ` + t.key },
      { "api-key": " ".repeat(100) },
      { "api-key": "\u00ff".repeat(64) },
      { "api-key": `${t.key.slice(0, -1)}` },
      { "api-key": t.key.toUpperCase() },
      { "api-key": "' OR 1=1--'-----------" },
      { "api-key": "%00%00%00%00%00%00%00%00" },
      { authorization: `Bearer ${t.key}` },
      { "x-api-key": t.key },
      { cookie: `api-key=${t.key}` },
    ];
    for (const h of headers) {
      for (const endpoint of ["resolve", "deep-resolve", "reverse-resolve"]) {
        const qs = endpoint === "reverse-resolve" ? `walletAddress=${ADDR.bob}` : "domain=alice.wallet";
        const res = await t.app.inject({ url: `${V1}/${endpoint}?${qs}`, headers: h });
        checkRefusal(res, JSON.stringify(h).slice(0, 100));
        expect(res.statusCode).toBe(401);
      }
    }
  });

  it("answers hostile paths and methods with a 4xx envelope", async () => {
    const urls = [
      `${V1}/../../etc/passwd`,
      `${V1}/%2e%2e/%2e%2e/etc/passwd`,
      `${V1}/resolve/..%2F..%2F`,
      `${V1}//resolve`,
      `${V1}/resolve;jsessionid=1`,
      `/${"a/".repeat(2000)}`,
      `${V1}/${"%FF".repeat(500)}`,
      `${V1}/%00`,
      `${V1}/\u0000`,
      `${V1}/openapi.json/..`,
    ];
    for (const url of urls) {
      for (const method of ["GET", "POST", "OPTIONS", "DELETE"] as const) {
        checkRefusal(
          await t.app.inject({ method, url, headers: { "api-key": t.key } }),
          `${method} ${url.slice(0, 80)}`,
        );
      }
    }
  });

  it("keeps serving good requests after the barrage", async () => {
    expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../src/domain/errors.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR } from "./helpers/world.js";

const V1 = "/svc/api/v1";
const NETWORKS = "one of ETHEREUM, POLYGON, BSC, AURORA, SOLANA (any case; aliases such as ETH, MATIC, BNB)";
const PROVIDERS =
  "one of NAMESPACE_A, NAMESPACE_B, NAMESPACE_C, NAMESPACE_D (any case; aliases such as FNS, UNS, ENS)";
const ADDRESS = "a wallet address: 0x followed by 40 hexadecimal digits (prefix and digits in any case)";
const EXPLAIN = "true or false (1/0 and yes/no also work)";
const KEY = "KEY";

/** One probe: the route, the query, the api-key header(s) (KEY: the test key), and the answer. */
interface Row {
  route: "resolve" | "deep-resolve" | "reverse-resolve";
  /** The parameter (or header) the row is about: a refusal's message must name it. */
  param: string;
  what: string;
  query: string;
  apiKey?: string | string[] | null;
  status: number;
  code?: ErrorCode;
  message?: string | RegExp;
  /** The name the message must carry, when not `"param"` (an empty alias: domain is missing). */
  named?: string;
}

const missing = (p: string) => `The parameter "${p}" is required (it is missing or empty).`;
const undecodable = (p: string) =>
  `The parameter "${p}" is not valid URL encoding: a "%" must be followed by two hexadecimal digits (write a literal "%" as %25).`;
const twice = (p: string) => `The parameter "${p}" is given more than once; give it once.`;
const mustBe = (p: string, expected: string, got: string) =>
  `The parameter "${p}" must be ${expected}; got ${JSON.stringify(got)}.`;
const notAName = (p: string) => new RegExp(`^The parameter "${p}" is not a valid domain name: .+\\.$`);

function nameRows(route: "resolve" | "deep-resolve", p: "domain" | "fullQualifiedDomain"): Row[] {
  const r = (what: string, query: string, status: number, code?: ErrorCode, message?: string | RegExp) => ({
    route,
    param: p,
    what,
    query,
    status,
    code,
    message,
  });
  return [
    { ...r("empty", `${p}=`, 400, "MISSING_PARAMETER", missing("domain")), named: '"domain"' },
    { ...r("blank", `${p}=%20%09`, 400, "MISSING_PARAMETER", missing("domain")), named: '"domain"' },
    r("trimmed", `${p}=%20alice.wallet%20`, 200),
    r("undecodable escape", `${p}=%ZZ.wallet`, 400, "BAD_REQUEST", undecodable(p)),
    r("lone %", `${p}=alice%.wallet`, 400, "BAD_REQUEST", undecodable(p)),
    r("invalid UTF-8", `${p}=%C3%28.eth`, 400, "INVALID_DOMAIN", notAName(p)),
    r("single label", `${p}=alice`, 400, "INVALID_DOMAIN", notAName(p)),
    r("empty label", `${p}=a..wallet`, 400, "INVALID_DOMAIN", notAName(p)),
    r("invisible character", `${p}=al%E2%80%8Bice.wallet`, 400, "INVALID_DOMAIN", notAName(p)),
    r("markup", `${p}=%3Cscript%3Ealert(1)%3C%2Fscript%3E.wallet`, 400, "INVALID_DOMAIN", notAName(p)),
    r("SQL", `${p}=${encodeURIComponent("' OR 1=1--")}`, 400, "INVALID_DOMAIN", notAName(p)),
    r(
      "over 1,024 characters",
      `${p}=${"a".repeat(1021)}.eth`,
      400,
      "PARAMETER_TOO_LONG",
      `The parameter "${p}" is longer than 1024 characters.`,
    ),
    r(
      "over 1,024 bytes",
      `${p}=${"%C3%A9".repeat(520)}.eth`,
      400,
      "PARAMETER_TOO_LONG",
      `The parameter "${p}" is longer than 1024 bytes.`,
    ),
    r(
      "over 255 labels",
      `${p}=${"a.".repeat(256)}eth`,
      400,
      "PARAMETER_TOO_LONG",
      `The parameter "${p}" has more than 255 labels.`,
    ),
    r("duplicated", `${p}=a.wallet&${p}=b.wallet`, 400, "INVALID_PARAMETER", twice(p)),
  ];
}

function filterRows(route: Row["route"], base: string): Row[] {
  const rows: Row[] = [];
  for (const [p, expected, code] of [
    ["network", NETWORKS, "INVALID_NETWORK"],
    ["provider", PROVIDERS, "INVALID_PROVIDER"],
  ] as const) {
    const r = (what: string, value: string, status: number, c?: ErrorCode, message?: string | RegExp) =>
      rows.push({ route, param: p, what, query: `${base}&${p}=${value}`, status, code: c, message });
    r("empty (ignored)", "", 200);
    r("blank (ignored)", "%20", 200);
    r("alias, any case", p === "network" ? "eth" : route === "reverse-resolve" ? "ens" : "uns", 200);
    r("unknown", "MARS", 400, code, mustBe(p, expected, "MARS"));
    r("prototype key", "__proto__", 400, code, mustBe(p, expected, "__proto__"));
    r("control character", "eth%00", 400, code, mustBe(p, expected, "eth\u0000"));
    r("invalid UTF-8", "%FF", 400, code, mustBe(p, expected, "\ufffd"));
    r("oversized", "E".repeat(5000), 400, code, mustBe(p, expected, `${"E".repeat(64)}…`));
    r("undecodable escape", "%ZZ", 400, "BAD_REQUEST", undecodable(p));
    rows.push({
      route,
      param: p,
      what: "duplicated",
      query: `${base}&${p}=ETHEREUM&${p}=POLYGON`,
      status: 400,
      code: "INVALID_PARAMETER",
      message: twice(p),
    });
  }
  return rows;
}

function explainRows(route: "resolve" | "deep-resolve", base: string): Row[] {
  const r = (what: string, value: string, status: number, code?: ErrorCode, message?: string) => ({
    route,
    param: "explain",
    what,
    query: `${base}&explain=${value}`,
    status,
    code,
    message,
  });
  return [
    r("empty (ignored)", "", 200),
    r("1", "1", 200),
    r("No", "No", 200),
    r("not a boolean", "maybe", 400, "INVALID_PARAMETER", mustBe("explain", EXPLAIN, "maybe")),
    r(
      "oversized",
      "t".repeat(3000),
      400,
      "INVALID_PARAMETER",
      mustBe("explain", EXPLAIN, `${"t".repeat(64)}…`),
    ),
    r("undecodable escape", "tru%e", 400, "BAD_REQUEST", undecodable("explain")),
    {
      route,
      param: "explain",
      what: "duplicated",
      query: `${base}&explain=true&explain=false`,
      status: 400,
      code: "INVALID_PARAMETER",
      message: twice("explain"),
    },
  ];
}

const AT = "an ISO 8601 time with a time zone, such as 2024-05-01T12:00:00Z, or a date such as 2024-05-01";
const AT_BLOCK =
  "NETWORK:BLOCK, one of ETHEREUM, POLYGON, BSC, AURORA, SOLANA (or an alias) and a block number from 0 to 9007199254740991, such as POLYGON:51234567";

/** provenance, at and atBlock: parameters of all three routes. */
function historyRows(route: Row["route"], base: string): Row[] {
  const r = (
    param: string,
    what: string,
    query: string,
    status: number,
    code?: ErrorCode,
    message?: string | RegExp,
  ) => ({
    route,
    param,
    what,
    query: `${base}&${query}`,
    status,
    code,
    message,
  });
  const badAt = (what: string, value: string) =>
    r("at", what, `at=${encodeURIComponent(value)}`, 400, "INVALID_PARAMETER", mustBe("at", AT, value));
  const badBlock = (what: string, value: string) =>
    r(
      "atBlock",
      what,
      `atBlock=${encodeURIComponent(value)}`,
      400,
      "INVALID_PARAMETER",
      mustBe("atBlock", AT_BLOCK, value),
    );
  return [
    r("provenance", "empty (ignored)", "provenance=", 200),
    r("provenance", "yes", "provenance=yes", 200),
    r(
      "provenance",
      "not a boolean",
      "provenance=maybe",
      400,
      "INVALID_PARAMETER",
      mustBe("provenance", EXPLAIN, "maybe"),
    ),
    r(
      "provenance",
      "oversized",
      `provenance=${"t".repeat(3000)}`,
      400,
      "INVALID_PARAMETER",
      mustBe("provenance", EXPLAIN, `${"t".repeat(64)}…`),
    ),
    r(
      "provenance",
      "duplicated",
      "provenance=true&provenance=true",
      400,
      "INVALID_PARAMETER",
      twice("provenance"),
    ),
    r("at", "empty (ignored)", "at=", 200),
    r("at", "nothing indexed yet", "at=2020-01-01", 400, "AT_BEFORE_INDEX", /^The parameter "at" /),
    badAt("not a time", "yesterday"),
    badAt("no such day", "2024-02-30"),
    badAt("no such hour", "2024-05-01T24:00:00Z"),
    badAt("no time zone", "2024-05-01T12:00:00"),
    badAt("a bare number", "1714564800"),
    badAt("markup", "<script>"),
    r(
      "at",
      "oversized",
      `at=2024-05-01T12:00:00.${"0".repeat(80)}Z`,
      400,
      "PARAMETER_TOO_LONG",
      'The parameter "at" is longer than 64 characters.',
    ),
    r("at", "in the future", "at=2999-01-01T00:00:00Z", 400, "AT_AFTER_INDEX", /^The parameter "at" /),
    r("at", "duplicated", "at=2024-05-01&at=2024-05-01", 400, "INVALID_PARAMETER", twice("at")),
    r(
      "at",
      "with atBlock",
      "at=2024-05-01&atBlock=POLYGON:1",
      400,
      "INVALID_PARAMETER",
      'The parameters "at" and "atBlock" exclude each other: give one of them.',
    ),
    r("atBlock", "empty (ignored)", "atBlock=", 200),
    r(
      "atBlock",
      "nothing indexed on the network",
      "atBlock=polygon:5",
      400,
      "AT_BEFORE_INDEX",
      /^The parameter "atBlock" /,
    ),
    badBlock("no block", "POLYGON"),
    badBlock("no network", ":5"),
    badBlock("unknown network", "MOON:5"),
    badBlock("negative block", "POLYGON:-1"),
    badBlock("fractional block", "POLYGON:1.5"),
    badBlock("hexadecimal block", "POLYGON:0x10"),
    badBlock("above 2^53", "POLYGON:9007199254740992"),
    badBlock("huge block", "POLYGON:99999999999999999"),
    r(
      "atBlock",
      "oversized",
      `atBlock=POLYGON:${"9".repeat(80)}`,
      400,
      "PARAMETER_TOO_LONG",
      'The parameter "atBlock" is longer than 64 characters.',
    ),
    r(
      "atBlock",
      "another network than network",
      "network=ETHEREUM&atBlock=POLYGON:1",
      400,
      "INVALID_PARAMETER",
      /^The parameter "atBlock" names POLYGON but "network" is ETHEREUM/,
    ),
    r(
      "atBlock",
      "duplicated",
      "atBlock=POLYGON:1&atBlock=POLYGON:1",
      400,
      "INVALID_PARAMETER",
      twice("atBlock"),
    ),
  ];
}

function addressRows(): Row[] {
  const p = "walletAddress";
  const r = (what: string, value: string, status: number, code?: ErrorCode, message?: string) => ({
    route: "reverse-resolve" as const,
    param: p,
    what,
    query: `${p}=${value}`,
    status,
    code,
    message,
  });
  const bad = (what: string, value: string, shown = decodeURIComponent(value)) =>
    r(what, value, 400, "INVALID_ADDRESS", mustBe(p, ADDRESS, shown));
  return [
    r("empty", "", 400, "MISSING_PARAMETER", missing(p)),
    r("blank", "%20", 400, "MISSING_PARAMETER", missing(p)),
    r("0x, lower case", ADDR.alice, 200),
    r("0X, upper case", ADDR.alice.toUpperCase(), 200),
    r("mixed case, padded", `%20${ADDR.alice.replace("f39fd6", "F39FD6")}%20`, 200),
    bad("not hex", `0x${"Z".repeat(40)}`),
    bad("too short", "0x1234"),
    bad("too long", `${ADDR.bob}00`),
    bad("no prefix", ADDR.bob.slice(2)),
    bad("a name", "alice.wallet"),
    bad("markup", "%3Cscript%3E"),
    bad("Arabic digits", `0x${"%D9%A3".repeat(40)}`),
    r(
      "oversized",
      "0".repeat(200),
      400,
      "PARAMETER_TOO_LONG",
      `The parameter "${p}" is longer than 128 characters.`,
    ),
    r("undecodable escape", `${ADDR.bob}%ZZ`, 400, "BAD_REQUEST", undecodable(p)),
    r("duplicated", `${ADDR.bob}&${p}=${ADDR.alice}`, 400, "INVALID_PARAMETER", twice(p)),
  ];
}

function keyRows(route: Row["route"], base: string): Row[] {
  const r = (what: string, apiKey: Row["apiKey"], code: ErrorCode, message: string) => ({
    route,
    param: "api-key",
    what,
    query: base,
    apiKey,
    status: 401,
    code,
    message,
  });
  const invalid =
    "The api-key header does not hold a valid API key (unknown, revoked, or of a deleted project).";
  return [
    r("missing", null, "API_KEY_MISSING", "The api-key header is missing."),
    r("empty", "", "API_KEY_MISSING", "The api-key header is missing."),
    r("unknown", "on_00000000_0000000000000000000000000000000", "API_KEY_INVALID", invalid),
    r("malformed", "nope", "API_KEY_INVALID", invalid),
    r("oversized", "k".repeat(10_000), "API_KEY_INVALID", invalid),
    r("hostile", "' OR 1=1--", "API_KEY_INVALID", invalid),
    r(
      "duplicated",
      [KEY, KEY],
      "API_KEY_INVALID",
      "The api-key header is sent more than once: send it once, with one key.",
    ),
  ];
}

const ROWS: Row[] = [
  ...(["resolve", "deep-resolve"] as const).flatMap((route) => [
    {
      route,
      param: "domain",
      what: "missing",
      query: "",
      status: 400,
      code: "MISSING_PARAMETER" as const,
      message: missing("domain"),
    },
    ...nameRows(route, "domain"),
    ...nameRows(route, "fullQualifiedDomain"),
    {
      route,
      param: "fullQualifiedDomain",
      what: "differs from domain",
      query: "domain=alice.wallet&fullQualifiedDomain=bob.x",
      status: 400,
      code: "INVALID_PARAMETER" as const,
      message: 'The parameters "domain" and "fullQualifiedDomain" (its alias) differ: give one of them.',
    },
    {
      route,
      param: "fullQualifiedDomain",
      what: "equal to domain",
      query: "domain=alice.wallet&fullQualifiedDomain=alice.wallet",
      status: 200,
    },
    ...filterRows(route, "domain=alice.wallet"),
    ...explainRows(route, "domain=alice.wallet"),
    ...historyRows(route, "domain=alice.wallet"),
    ...keyRows(route, "domain=alice.wallet"),
  ]),
  {
    route: "reverse-resolve",
    param: "walletAddress",
    what: "missing",
    query: "",
    status: 400,
    code: "MISSING_PARAMETER",
    message: missing("walletAddress"),
  },
  ...addressRows(),
  ...filterRows("reverse-resolve", `walletAddress=${ADDR.bob}`),
  // explain is not a parameter of reverse-resolve: like any unknown parameter, it is ignored.
  {
    route: "reverse-resolve",
    param: "explain",
    what: "not declared (ignored)",
    query: `walletAddress=${ADDR.bob}&explain=maybe&explain=x`,
    status: 200,
  },
  ...historyRows("reverse-resolve", `walletAddress=${ADDR.bob}`),
  ...keyRows("reverse-resolve", `walletAddress=${ADDR.bob}`),
  {
    route: "resolve",
    param: "query string",
    what: "over 8,192 characters",
    query: `domain=alice.wallet&pad=${"x".repeat(9000)}`,
    status: 400,
    code: "PARAMETER_TOO_LONG",
    message: "The query string is longer than 8192 characters.",
  },
];

// What a message written for a person never shows: a validator's words, a JSON pointer, a regex.
const INTERNALS =
  /pattern|querystring|instancePath|must match|must NOT|must be (string|boolean|integer|equal)|\^|\\s|\[0-9/;

describe("v1 parameters: every parameter of every route, with bad values", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(ROWS.map((row) => [`${row.route} ${row.param}: ${row.what}`, row] as const))(
    "%s",
    async (_label, row) => {
      const key = row.apiKey === undefined ? t.key : row.apiKey;
      const headers: Record<string, string | string[]> = {};
      if (key !== null)
        headers["api-key"] = Array.isArray(key) ? key.map((k) => (k === KEY ? t.key : k)) : key;
      const res = await t.app.inject({ url: `${V1}/${row.route}?${row.query}`, headers });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(row.status);
      if (row.status === 200) return;
      const body = res.json() as { result: boolean; error: { code: string; message: string } };
      expect(Object.keys(body).sort()).toEqual(["error", "result"]);
      expect(body.result).toBe(false);
      expect(body.error.code).toBe(row.code);
      expect(ERROR_CODES[row.code as ErrorCode].status).toBe(res.statusCode);
      if (typeof row.message === "string") expect(body.error.message).toBe(row.message);
      else expect(body.error.message).toMatch(row.message as RegExp);
      const named =
        row.named ?? (row.param.includes(" ") || row.param === "api-key" ? row.param : `"${row.param}"`);
      expect(body.error.message).toContain(named);
      expect(body.error.message).not.toMatch(INTERNALS);
    },
  );
});

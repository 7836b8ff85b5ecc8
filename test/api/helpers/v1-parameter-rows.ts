import type { ErrorCode } from "../../../src/domain/errors.js";
import {
  ADDRESS,
  EXPLAIN,
  KEY,
  missing,
  mustBe,
  NETWORKS,
  notAName,
  PROVIDERS,
  type Row,
  twice,
  undecodable,
} from "./parameter-rows.js";
import { ADDR } from "./world.js";

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

/** Every parameter of every v1 GET route, with good and bad values (parameters.test.ts; the Prism judge sends them too). */
export const PARAMETER_ROWS: Row[] = [
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

import type { ErrorCode } from "../../../src/domain/errors.js";
import { EXPLAIN, mustBe, type Row, twice } from "./parameter-rows.js";
import { ADDR } from "./world.js";

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

/** provenance, at and atBlock of every v1 GET route, with good and bad values (history-parameters.test.ts). */
export const HISTORY_ROWS: Row[] = [
  ...historyRows("resolve", "domain=alice.wallet"),
  ...historyRows("deep-resolve", "domain=alice.wallet"),
  ...historyRows("reverse-resolve", `walletAddress=${ADDR.bob}`),
];

import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { AppError, type ErrorCode } from "../../../domain/errors.js";
import { findNetwork, type Network, NETWORK_ORDER } from "../../../domain/networks.js";
import { findProvider, type Provider, PROVIDER_ORDER } from "../../../domain/providers.js";
import type { AtPoint, HistoryOptions } from "../../../domain/history.js";
import type { DomainFilter } from "../../../domain/types.js";
import type { RankContext } from "../../../resolution/rank.js";

/** Echoes a caller's value in a message: short, and JSON-quoted so control characters show. */
function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/** What a valid value of each v1 parameter is, in a partner's words (docs/api.md). */
const PARAMETER_EXPECTS: Record<string, string> = {
  domain: "a domain name such as alice.wallet",
  fullQualifiedDomain: "a domain name such as alice.wallet (it is an alias of domain)",
  walletAddress: "a wallet address: 0x followed by 40 hexadecimal digits (prefix and digits in any case)",
  network: `one of ${NETWORK_ORDER.join(", ")} (any case; aliases such as ETH, MATIC, BNB)`,
  provider: `one of ${PROVIDER_ORDER.join(", ")} (any case; aliases such as FNS, UNS, ENS)`,
  explain: "true or false (1/0 and yes/no also work)",
  provenance: "true or false (1/0 and yes/no also work)",
  at: "an ISO 8601 time with a time zone, such as 2024-05-01T12:00:00Z, or a date such as 2024-05-01",
  atBlock: `NETWORK:BLOCK, one of ${NETWORK_ORDER.join(", ")} (or an alias) and a block number from 0 to ${Number.MAX_SAFE_INTEGER}, such as POLYGON:51234567`,
};

/** The longest value each parameter may have, in characters (a domain is also limited in bytes). */
const PARAMETER_MAX_LENGTH: Record<string, number> = {
  domain: 1024,
  fullQualifiedDomain: 1024,
  walletAddress: 128,
  at: 64,
  atBlock: 64,
};

const ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

/** On a canonicalized query: "fullQualifiedDomain" when the name came through the alias. */
const DOMAIN_PARAM: unique symbol = Symbol("omniname.domainParam");
/** On a canonicalized query: the point in time of `at` or `atBlock`. */
const AT_POINT: unique symbol = Symbol("omniname.atPoint");

/**
 * v1's preValidation hook of a route (built from its querystring schema): checks and canonicalizes the parameters the route declares, so every
 * refusal is worded for a person and names the parameter (the schema behind it only checks
 * types). The rules, as docs/api.md states them:
 *
 * - A value is trimmed; an empty value counts as absent, for every parameter alike: an optional
 *   one is then ignored, a required one is missing (MISSING_PARAMETER).
 * - `fullQualifiedDomain` is an alias of `domain`; both given and different is INVALID_PARAMETER.
 * - network and provider aliases (any case) become wire values; walletAddress becomes 0x + lower
 *   case; explain becomes true/false.
 */
export function canonicalizeQueryFor(
  querySchema: unknown,
): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  // The route's declared parameters, read once when the route is added (request.routeOptions is a
  // getter that builds a new object on every call: a measurable cost on the hot path).
  const declared = (querySchema as { properties?: object } | undefined)?.properties ?? {};
  return (request, _reply, done) =>
    done(canonicalize(request.query as Record<string, string | undefined>, declared) ?? undefined);
}

/**
 * The same checks on a query built elsewhere (the console's "try it"): canonicalizes `q` in place
 * by the rules of the route whose querystring schema is given; the refusal v1 would answer, or null.
 */
export function canonicalizeQuery(
  q: Record<string, string | undefined>,
  querySchema: unknown,
): AppError | null {
  return canonicalize(q, (querySchema as { properties?: object } | undefined)?.properties ?? {});
}

function canonicalize(q: Record<string, string | undefined>, declared: object): AppError | null {
  // Only the route's own parameters are checked: others are ignored, whatever their value.
  const own = (name: string) => (Object.hasOwn(declared, name) ? q[name] : undefined);
  for (const name of Object.keys(PARAMETER_EXPECTS)) {
    const raw = own(name);
    if (raw === undefined) continue;
    const value = raw.trim();
    if (value === "") {
      delete q[name];
      continue;
    }
    const max = PARAMETER_MAX_LENGTH[name];
    if (max !== undefined && value.length > max)
      return new AppError("PARAMETER_TOO_LONG", `The parameter "${name}" is longer than ${max} characters.`);
    q[name] = value;
  }
  const alias = own("fullQualifiedDomain");
  if (alias !== undefined) {
    if (q.domain === undefined) {
      q.domain = alias;
      (q as { [DOMAIN_PARAM]?: string })[DOMAIN_PARAM] = "fullQualifiedDomain";
    } else if (alias !== q.domain) {
      return new AppError(
        "INVALID_PARAMETER",
        'The parameters "domain" and "fullQualifiedDomain" (its alias) differ: give one of them.',
      );
    }
    delete q.fullQualifiedDomain;
  }
  const address = own("walletAddress");
  if (address !== undefined) {
    if (!ADDRESS.test(address)) return invalid("INVALID_ADDRESS", "walletAddress", address);
    q.walletAddress = address.toLowerCase();
  }
  const network = own("network");
  if (network !== undefined) {
    const n = findNetwork(network);
    if (n === null) return invalid("INVALID_NETWORK", "network", network);
    q.network = n;
  }
  const provider = own("provider");
  if (provider !== undefined) {
    const p = findProvider(provider);
    if (p === null) return invalid("INVALID_PROVIDER", "provider", provider);
    q.provider = p;
  }
  for (const name of ["explain", "provenance"] as const) {
    const value = own(name);
    if (value === undefined) continue;
    // Ajv coerces only "true"/"false"; partners also send 1/0 and other cases.
    const e = value.toLowerCase();
    if (e === "true" || e === "1" || e === "yes") q[name] = "true";
    else if (e === "false" || e === "0" || e === "no") q[name] = "false";
    else return invalid("INVALID_PARAMETER", name, value);
  }
  return canonicalizeAt(q, own("at"), own("atBlock"));
}

function canonicalizeAt(
  q: Record<string, string | undefined>,
  at: string | undefined,
  atBlock: string | undefined,
): AppError | null {
  if (at !== undefined && atBlock !== undefined)
    return new AppError(
      "INVALID_PARAMETER",
      'The parameters "at" and "atBlock" exclude each other: give one of them.',
    );
  let point: AtPoint | null = null;
  if (at !== undefined) {
    const time = parseIsoTime(at);
    if (time === null) return invalid("INVALID_PARAMETER", "at", at);
    point = { kind: "time", time };
  } else if (atBlock !== undefined) {
    const m = AT_BLOCK.exec(atBlock);
    const network = m ? findNetwork(m[1]) : null;
    const block = m ? Number(m[2]) : Number.NaN;
    if (network === null || !Number.isSafeInteger(block))
      return invalid("INVALID_PARAMETER", "atBlock", atBlock);
    if (q.network !== undefined && q.network !== network)
      return new AppError(
        "INVALID_PARAMETER",
        `The parameter "atBlock" names ${network} but "network" is ${q.network}: a block belongs to one network.`,
      );
    point = { kind: "block", network, block };
    q.atBlock = `${network}:${block}`;
  }
  if (point !== null) (q as { [AT_POINT]?: AtPoint })[AT_POINT] = point;
  return null;
}

const AT_BLOCK = /^([A-Za-z][A-Za-z0-9_]*):([0-9]{1,16})$/;
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+ -]\d{2}:?\d{2}))?$/;

/**
 * An ISO 8601 time with a zone, or a date (midnight UTC), as epoch milliseconds; null when it is not
 * one or names a day, hour or minute that does not exist (2024-02-30, 25:00). A time without a
 * zone is refused: it would be the server's local time. A space in place of the offset's `+` is
 * read as `+` (an unencoded `+` in a query string decodes to a space).
 */
export function parseIsoTime(value: string): number | null {
  const m = ISO_TIME.exec(value);
  if (m === null) return null;
  const [, y, mo, d, h = "00", mi = "00", sec = "00", frac = "", zone = "Z"] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return null;
  const utc = Date.UTC(
    year,
    month - 1,
    day,
    Number(h),
    Number(mi),
    Number(sec),
    Number(frac.slice(0, 3).padEnd(3, "0")),
  );
  // Date.UTC rolls 2024-02-30 over into March: a day that does not exist is refused.
  if (new Date(utc).getUTCDate() !== day) return null;
  let offset = 0;
  if (zone !== "Z" && zone !== "z") {
    const digits = zone.replace(":", "");
    const hours = Number(digits.slice(1, 3));
    const minutes = Number(digits.slice(3, 5));
    if (hours > 23 || minutes > 59) return null;
    offset = (digits[0] === "-" ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  return utc - offset;
}

/** The time travel and provenance options of a canonicalized query (resolution's `history`). */
export function historyOptionsOf(q: object): HistoryOptions {
  const provenance = (q as { provenance?: unknown }).provenance;
  return {
    at: (q as { [AT_POINT]?: AtPoint })[AT_POINT],
    provenance: provenance === true || provenance === "true",
  };
}

function invalid(code: ErrorCode, name: string, value: string): AppError {
  return new AppError(
    code,
    `The parameter "${name}" must be ${PARAMETER_EXPECTS[name]}; got ${quote(value)}.`,
  );
}

/**
 * A name that fails normalization, in the words of the parameter the caller used: resolution
 * says "The domain name is not valid: <reason>.", the answer "The parameter "domain" is not a
 * valid domain name: <reason>.".
 */
export function domainParamError(e: unknown, query: object): unknown {
  const param = (query as { [DOMAIN_PARAM]?: string })[DOMAIN_PARAM] ?? "domain";
  if (!(e instanceof AppError) || (e.code !== "INVALID_DOMAIN" && e.code !== "PARAMETER_TOO_LONG")) return e;
  const tail = e.message.replace(/^The domain name /, "");
  const message =
    e.code === "INVALID_DOMAIN"
      ? `The parameter "${param}" is not a valid domain name${tail.replace(/^is not valid/, "")}`
      : `The parameter "${param}" ${tail}`;
  return new AppError(e.code, message, { cause: e });
}

/** The store filter of a canonicalized query. */
export function filterOf(q: { network?: string | undefined; provider?: string | undefined }): DomainFilter {
  return { network: q.network as Network | undefined, provider: q.provider as Provider | undefined };
}

export interface RankInputs {
  clock: () => number;
  /** Header carrying the caller's ISO country code, set by a trusted proxy; undefined: unknown. */
  countryHeader: string | undefined;
}

const COUNTRY = /^[A-Za-z]{2}$/;

/** The ranking context of a request: the key's project settings, the caller's country, the time. */
export function rankContext(request: FastifyRequest, inputs: RankInputs, explain: boolean): RankContext {
  let country: string | null = null;
  if (inputs.countryHeader !== undefined) {
    const v = request.headers[inputs.countryHeader];
    if (typeof v === "string" && COUNTRY.test(v)) country = v.toUpperCase();
  }
  return { projectSettings: request.project?.settings ?? {}, country, now: inputs.clock(), explain };
}

export { quote };

import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { AppError } from "../../../domain/errors.js";
import type { AtPoint, HistoryOptions } from "../../../domain/history.js";
import { findNetwork, type Network } from "../../../domain/networks.js";
import { findProvider, type Provider } from "../../../domain/providers.js";
import type { DomainFilter } from "../../../domain/types.js";
import type { RankContext } from "../../../resolution/rank.js";
import { parameterRefusal, quote } from "../../plugins/errors.plugin.js";
import { BOOLEAN_VALUES, ISO_TIME } from "./v1.schemas.js";

/** The property schemas of a route's querystring: what a value may be, and its wording. */
type Declared = Record<string, { title?: string; maxLength?: number; pattern?: string }>;

const declaredOf = (querySchema: unknown): Declared =>
  (querySchema as { properties?: Declared } | undefined)?.properties ?? {};

/** The parameters canonicalization trims, in the order a refusal is looked for. */
const PARAMETERS = [
  "domain",
  "fullQualifiedDomain",
  "walletAddress",
  "network",
  "provider",
  "explain",
  "provenance",
  "at",
  "atBlock",
] as const;

/** On a canonicalized query: "fullQualifiedDomain" when the name came through the alias. */
const DOMAIN_PARAM: unique symbol = Symbol("omniname.domainParam");
/** On a canonicalized query: the point in time of `at` or `atBlock`. */
const AT_POINT: unique symbol = Symbol("omniname.atPoint");

/** A query after validation and canonicalization: wire values, booleans, the name under `domain`. */
export interface CanonicalQuery {
  network?: Network;
  provider?: Provider;
  explain?: boolean;
  provenance?: boolean;
  at?: string;
  atBlock?: string;
}
export type NameParams = CanonicalQuery & { domain: string };
export type ReverseParams = CanonicalQuery & { walletAddress: string };

/**
 * v1's preHandler of a route (built from its querystring schema), run once the schema has
 * validated the query (v1.schemas.ts: the schema accepts exactly what the API accepts, and
 * errors.plugin.ts words its refusals). It canonicalizes, by the rules of docs/api.md:
 *
 * - A value is trimmed; an empty value counts as absent, for every parameter alike: an optional
 *   one is then ignored, a required one is missing (MISSING_PARAMETER).
 * - `fullQualifiedDomain` is an alias of `domain`; both given and different is INVALID_PARAMETER.
 * - network and provider aliases (any case) become wire values; an EVM walletAddress becomes 0x +
 *   lower case (a base58 Solana address stays as given); explain and provenance become booleans; at and atBlock a point in time.
 *
 * Refused here only what a schema cannot say: a rule over two parameters, a day that does not
 * exist, a block number past 2^53.
 */
export function canonicalizeQueryFor(
  querySchema: unknown,
): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  // The route's declared parameters, read once when the route is added (request.routeOptions is a
  // getter that builds a new object on every call: a measurable cost on the hot path).
  const declared = declaredOf(querySchema);
  const needsDomain = Object.hasOwn(declared, "domain");
  return (request, _reply, done) => {
    const q = request.query as Record<string, unknown>;
    const refused = canonicalize(q, declared);
    if (refused === null && needsDomain && q.domain === undefined)
      return done(parameterRefusal("domain", undefined, { keyword: "required" }, declared.domain));
    done(refused ?? undefined);
  };
}

/**
 * The same on a query built elsewhere (a batch item, the console's "try it"): checks `q` against
 * the route's querystring schema (its maxLength and pattern, the only keywords the v1 parameters
 * use), then canonicalizes it in place; the refusal v1 would answer, or null.
 */
export function canonicalizeQuery(q: Record<string, unknown>, querySchema: unknown): AppError | null {
  const declared = declaredOf(querySchema);
  for (const name of PARAMETERS) {
    const schema = declared[name];
    const value = q[name];
    if (schema === undefined || typeof value !== "string") continue;
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      return parameterRefusal(name, value, { keyword: "maxLength", limit: schema.maxLength }, schema);
    if (schema.pattern !== undefined && !patternOf(schema.pattern).test(value))
      return parameterRefusal(name, value, { keyword: "pattern" }, schema);
  }
  return canonicalize(q, declared);
}

const patterns = new Map<string, RegExp>();
/** A schema's pattern as Ajv compiles it (the "u" flag). */
function patternOf(source: string): RegExp {
  let re = patterns.get(source);
  if (re === undefined) {
    re = new RegExp(source, "u");
    patterns.set(source, re);
  }
  return re;
}

function canonicalize(q: Record<string, unknown>, declared: Declared): AppError | null {
  // Only the route's own parameters are read: others are ignored, whatever their value.
  const own = (name: string) => (Object.hasOwn(declared, name) ? (q[name] as string | undefined) : undefined);
  for (const name of PARAMETERS) {
    const raw = own(name);
    if (raw === undefined) continue;
    const value = raw.trim();
    if (value === "") delete q[name];
    else q[name] = value;
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
  // EVM addresses are case-insensitive; base58 (Solana) is case-sensitive and kept as given.
  if (address !== undefined) q.walletAddress = /^0x/i.test(address) ? address.toLowerCase() : address;
  for (const [name, find] of [
    ["network", findNetwork],
    ["provider", findProvider],
  ] as const) {
    const value = own(name);
    if (value === undefined) continue;
    const wire = find(value);
    // The schema's pattern is generated from the same table: only an unchecked query gets here.
    if (wire === null) return parameterRefusal(name, value, { keyword: "pattern" }, declared[name]);
    q[name] = wire;
  }
  for (const name of ["explain", "provenance"] as const) {
    const value = own(name);
    if (value === undefined) continue;
    const at = (BOOLEAN_VALUES as readonly string[]).indexOf(value.toLowerCase());
    if (at === -1) return parameterRefusal(name, value, { keyword: "pattern" }, declared[name]);
    q[name] = at < BOOLEAN_VALUES.length / 2;
  }
  return canonicalizeAt(q, own("at"), own("atBlock"), declared);
}

function canonicalizeAt(
  q: Record<string, unknown>,
  at: string | undefined,
  atBlock: string | undefined,
  declared: Declared,
): AppError | null {
  const invalid = (name: "at" | "atBlock", value: string) =>
    parameterRefusal(name, value, { keyword: "format" }, declared[name]);
  if (at !== undefined && atBlock !== undefined)
    return new AppError(
      "INVALID_PARAMETER",
      'The parameters "at" and "atBlock" exclude each other: give one of them.',
    );
  let point: AtPoint | null = null;
  if (at !== undefined) {
    const time = parseIsoTime(at);
    if (time === null) return invalid("at", at);
    point = { kind: "time", time };
  } else if (atBlock !== undefined) {
    const m = AT_BLOCK.exec(atBlock);
    const network = m ? findNetwork(m[1]) : null;
    const block = m ? Number(m[2]) : Number.NaN;
    if (network === null || !Number.isSafeInteger(block)) return invalid("atBlock", atBlock);
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
    provenance: provenance === true,
  };
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

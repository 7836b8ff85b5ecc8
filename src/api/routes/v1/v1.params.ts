import type { FastifyRequest } from "fastify";
import type { AtPoint, HistoryOptions } from "../../../domain/history.js";
import type { Network } from "../../../domain/networks.js";
import type { Provider } from "../../../domain/providers.js";
import type { DomainFilter } from "../../../domain/types.js";
import type { RankContext } from "../../../resolution/rank.js";
import { quote } from "../../plugins/errors.plugin.js";
import { ISO_TIME } from "./v1.schemas.js";

/**
 * A query once validated (v1.keywords.ts canonicalizes it while the schema validates it): wire
 * values, booleans, the name under `domain`, `at` as an ISO 8601 UTC time, `atBlock` as
 * NETWORK:BLOCK.
 */
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
export function historyOptionsOf(q: CanonicalQuery): HistoryOptions {
  return { at: atPointOf(q), provenance: q.provenance === true };
}

function atPointOf(q: CanonicalQuery): AtPoint | undefined {
  if (q.at !== undefined) return { kind: "time", time: Date.parse(q.at) };
  if (q.atBlock === undefined) return undefined;
  const colon = q.atBlock.indexOf(":");
  return {
    kind: "block",
    network: q.atBlock.slice(0, colon) as Network,
    block: Number(q.atBlock.slice(colon + 1)),
  };
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

import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { AppError } from "../../../domain/errors.js";
import { findNetwork, type Network, NETWORK_ORDER } from "../../../domain/networks.js";
import { findProvider, type Provider, PROVIDER_ORDER } from "../../../domain/providers.js";
import type { DomainFilter } from "../../../domain/types.js";
import type { RankContext } from "../../../resolution/rank.js";

/** Echoes a caller's value in a message: short, and JSON-quoted so control characters show. */
function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/**
 * v1's preValidation hook: resolves the `fullQualifiedDomain` alias and turns network/provider
 * aliases (any case) into wire values, so the schema then checks plain enums. An empty optional
 * parameter counts as absent; a required one stays empty and the schema refuses it.
 */
export function canonicalizeQuery(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  done(canonicalize(request.query as Record<string, string | undefined>) ?? undefined);
}

function canonicalize(q: Record<string, string | undefined>): AppError | null {
  const alias = q.fullQualifiedDomain;
  if (alias !== undefined) {
    if (q.domain === undefined || q.domain === "") q.domain = alias;
    else if (alias !== "" && alias !== q.domain) {
      return new AppError("INVALID_PARAMETER", "domain and fullQualifiedDomain are both given and differ.");
    }
    delete q.fullQualifiedDomain;
  }
  if (q.network !== undefined) {
    if (q.network.trim() === "") delete q.network;
    else {
      const n = findNetwork(q.network);
      if (n === null) {
        return new AppError(
          "INVALID_NETWORK",
          `Unknown network ${quote(q.network)}; expected one of ${NETWORK_ORDER.join(", ")}.`,
        );
      }
      q.network = n;
    }
  }
  if (q.provider !== undefined) {
    if (q.provider.trim() === "") delete q.provider;
    else {
      const p = findProvider(q.provider);
      if (p === null) {
        return new AppError(
          "INVALID_PROVIDER",
          `Unknown provider ${quote(q.provider)}; expected one of ${PROVIDER_ORDER.join(", ")}.`,
        );
      }
      q.provider = p;
    }
  }
  if (q.explain !== undefined) {
    // Ajv coerces only "true"/"false"; partners also send 1/0 and other cases.
    const e = q.explain.trim().toLowerCase();
    if (e === "") delete q.explain;
    else if (e === "true" || e === "1" || e === "yes") q.explain = "true";
    else if (e === "false" || e === "0" || e === "no") q.explain = "false";
  }
  return null;
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

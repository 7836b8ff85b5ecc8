import { AppError } from "../../../domain/errors.js";
import { queryCheck } from "./v1.keywords.js";
import { quote } from "./v1.params.js";
import { FilterQuery } from "./v1.schemas.js";

/** The most names or addresses one batch call may hold. */
export const BATCH_MAX_INPUTS = 1000;
/** The largest batch body: 1,000 names of up to 1,024 characters fit. */
export const BATCH_MAX_BODY_BYTES = 1024 * 1024;

/** A batch body checked whole: its inputs as sent, and the filters shared by every item. */
export interface BatchBody {
  inputs: string[];
  /** network and provider, canonicalized (wire values), or absent. */
  filters: { network?: string; provider?: string };
}

const typeName = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "an array" : typeof v);

/**
 * Checks a batch body before any work is done or counted: a JSON object whose `field` is an array
 * of 1 to 1,000 strings, with optional `network` and `provider` strings of the values the single
 * endpoints take. Every refusal is 400 and names the field; unknown fields are ignored, as unknown
 * query parameters are. Items are not checked here: a bad name is that item's error, not the batch's.
 *
 * @example
 * parseBatchBody({ domains: ["alice.wallet"], network: "matic" }, "domains")
 * // → { inputs: ["alice.wallet"], filters: { network: "POLYGON" } }
 */
export function parseBatchBody(body: unknown, field: string): BatchBody {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new AppError(
      "BAD_REQUEST",
      `The body must be a JSON object such as {"${field}": [...]}; got ${typeName(body)}.`,
    );
  const b = body as Record<string, unknown>;
  const list = Object.hasOwn(b, field) ? b[field] : undefined;
  if (list === undefined || list === null)
    throw new AppError(
      "MISSING_PARAMETER",
      `The field "${field}" is required: an array of 1 to ${BATCH_MAX_INPUTS} strings.`,
    );
  if (!Array.isArray(list))
    throw new AppError(
      "INVALID_PARAMETER",
      `The field "${field}" must be an array of 1 to ${BATCH_MAX_INPUTS} strings; got ${typeName(list)}.`,
    );
  if (list.length === 0)
    throw new AppError(
      "INVALID_PARAMETER",
      `The field "${field}" is empty: give 1 to ${BATCH_MAX_INPUTS} inputs.`,
    );
  if (list.length > BATCH_MAX_INPUTS)
    throw new AppError(
      "INVALID_PARAMETER",
      `The field "${field}" holds ${list.length} inputs; at most ${BATCH_MAX_INPUTS} per call.`,
    );
  for (let i = 0; i < list.length; i++) {
    if (typeof list[i] !== "string")
      throw new AppError(
        "INVALID_PARAMETER",
        `The field "${field}[${i}]" must be a string; got ${typeName(list[i])}.`,
      );
  }
  const filters: Record<string, string | undefined> = {};
  for (const name of ["network", "provider"] as const) {
    const v = Object.hasOwn(b, name) ? b[name] : undefined;
    if (v === undefined || v === null) continue;
    if (typeof v !== "string")
      throw new AppError("INVALID_PARAMETER", `The field "${name}" must be a string; got ${typeName(v)}.`);
    filters[name] = v;
  }
  // The single endpoints' own rules (aliases, any case, empty means absent), worded for a body.
  const refused = checkFilters(filters);
  if (refused !== null) throw refused;
  return { inputs: list as string[], filters: filters as BatchBody["filters"] };
}

/** The single endpoints' rules for network and provider, worded for a body's fields. */
const checkFilters = queryCheck(FilterQuery, { what: "field" });

/**
 * An item's refusal in the batch's words: `The parameter "domain" …` becomes
 * `The input "domains[3]" …`, so the caller knows which input and where it is.
 */
export function itemError(e: AppError, param: string, field: string, index: number): AppError {
  return new AppError(
    e.code,
    e.message.replace(`The parameter "${param}"`, `The input ${quote(`${field}[${index}]`)}`),
    { cause: e },
  );
}

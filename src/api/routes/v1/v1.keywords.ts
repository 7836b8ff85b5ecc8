import fastifyAjvCompiler from "@fastify/ajv-compiler";
import type { FastifySchemaCompiler } from "fastify";
import type { AppError } from "../../../domain/errors.js";
import { findNetwork } from "../../../domain/networks.js";
import { findProvider } from "../../../domain/providers.js";
import { checkName } from "../../../resolution/resolution.js";
import {
  type Naming,
  type ParameterSchema,
  type ValidationFailure,
  validationRefusal,
} from "../../plugins/errors.plugin.js";
import { parseIsoTime } from "./v1.params.js";

/**
 * The two schema keywords through which v1's query schemas (v1.schemas.ts) say everything the API
 * accepts, so that one validation (Ajv, while Fastify validates the query) both checks and
 * canonicalizes a query, by the rules of docs/api.md:
 *
 * - `x-canonical` on a parameter (after its pattern and maxLength passed): the value is trimmed,
 *   and an empty one counts as absent (removed); network and provider aliases in any case become
 *   wire values, an EVM walletAddress 0x + lower case (a base58 Solana address stays as given),
 *   explain and provenance booleans, `at` an ISO 8601 UTC time, `atBlock` NETWORK:BLOCK.
 * - `x-query` on a query (after its parameters): the rules over several parameters, in this order:
 *   `fullQualifiedDomain` is an alias of `domain` (both given and different: refused), `at` and
 *   `atBlock` exclude each other, `atBlock` and `network` name one network, `domain` is required,
 *   and it must be a name that can be looked up (resolution's checkName).
 *
 * A failure is an Ajv error that names its parameter (`params.parameter`, or the instance path);
 * errors.plugin.ts words every refusal. The OpenAPI document shows both keywords as extensions.
 */

type Kind = "trim" | "address" | "network" | "provider" | "boolean" | "time" | "block";

interface DataContext {
  parentData: Record<string, unknown>;
  parentDataProperty: string | number;
}

interface KeywordError {
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

type Validate = ((schema: unknown, data: unknown, parentSchema: unknown, cxt?: DataContext) => boolean) & {
  errors?: KeywordError[] | null;
};

const TRUE = new Set(["true", "1", "yes"]);
const AT_BLOCK = /^([A-Za-z][A-Za-z0-9_]*):([0-9]{1,16})$/;

/** A value's canonical form, or undefined when the value is not one (the pattern let it through). */
function canonical(kind: Kind, value: string): unknown {
  switch (kind) {
    case "trim":
      return value;
    case "address":
      // EVM addresses are case-insensitive; base58 (Solana) is case-sensitive and kept as given.
      return /^0x/i.test(value) ? value.toLowerCase() : value;
    case "network":
      return findNetwork(value) ?? undefined;
    case "provider":
      return findProvider(value) ?? undefined;
    case "boolean":
      return TRUE.has(value.toLowerCase());
    case "time": {
      const time = parseIsoTime(value);
      return time === null ? undefined : new Date(time).toISOString();
    }
    case "block": {
      const m = AT_BLOCK.exec(value);
      const network = m ? findNetwork(m[1]) : null;
      const block = m ? Number(m[2]) : Number.NaN;
      return network === null || !Number.isSafeInteger(block) ? undefined : `${network}:${block}`;
    }
  }
}

const canonicalKeyword: Validate = (kind, data, _parentSchema, cxt) => {
  canonicalKeyword.errors = null;
  if (cxt === undefined || typeof data !== "string") return true;
  const value = data.trim();
  if (value === "") {
    delete cxt.parentData[cxt.parentDataProperty];
    return true;
  }
  const out = canonical(kind as Kind, value);
  if (out === undefined) {
    // A day that does not exist, a block past 2^53: refused as the pattern's failure is.
    canonicalKeyword.errors = [{ keyword: "format", params: {} }];
    return false;
  }
  cxt.parentData[cxt.parentDataProperty] = out;
  return true;
};

/** A refusal over the whole query: the parameter it names, its code and its words. */
const refuse = (parameter: string, params: Record<string, unknown>, keyword = "x-query"): false => {
  queryKeyword.errors = [{ keyword, params: { parameter, ...params } }];
  return false;
};

const queryKeyword: Validate = (_schema, data, parentSchema) => {
  queryKeyword.errors = null;
  if (typeof data !== "object" || data === null) return true;
  const q = data as Record<string, unknown>;
  const declared = (parentSchema as { properties?: object }).properties ?? {};
  const has = (name: string) => Object.hasOwn(declared, name);
  let nameParam = "domain";
  if (has("fullQualifiedDomain") && q.fullQualifiedDomain !== undefined) {
    if (q.domain === undefined) {
      q.domain = q.fullQualifiedDomain;
      nameParam = "fullQualifiedDomain";
    } else if (q.domain !== q.fullQualifiedDomain) {
      return refuse("fullQualifiedDomain", {
        code: "INVALID_PARAMETER",
        message: 'The parameters "domain" and "fullQualifiedDomain" (its alias) differ: give one of them.',
      });
    }
    delete q.fullQualifiedDomain;
  }
  if (has("at") && q.at !== undefined && q.atBlock !== undefined)
    return refuse("atBlock", {
      code: "INVALID_PARAMETER",
      message: 'The parameters "at" and "atBlock" exclude each other: give one of them.',
    });
  if (has("atBlock") && typeof q.atBlock === "string" && q.network !== undefined) {
    const network = q.atBlock.slice(0, q.atBlock.indexOf(":"));
    if (network !== q.network)
      return refuse("atBlock", {
        code: "INVALID_PARAMETER",
        message: `The parameter "atBlock" names ${network} but "network" is ${String(q.network)}: a block belongs to one network.`,
      });
  }
  if (!has("domain")) return true;
  if (typeof q.domain !== "string") return refuse("domain", { missingProperty: "domain" }, "required");
  const checked = checkName(q.domain);
  if ("names" in checked) return true;
  return refuse(nameParam, {
    code: checked.code,
    words:
      checked.code === "INVALID_DOMAIN"
        ? `is not a valid domain name: ${checked.reason}.`
        : `${checked.problem}.`,
  });
};

/** The Ajv plugin adding both keywords. */
export function v1Keywords(ajv: { addKeyword(def: Record<string, unknown>): unknown }): void {
  ajv.addKeyword({
    keyword: "x-canonical",
    type: "string",
    schemaType: "string",
    modifying: true,
    errors: true,
    validate: canonicalKeyword,
  });
  ajv.addKeyword({
    keyword: "x-query",
    type: "object",
    schemaType: "boolean",
    modifying: true,
    errors: true,
    validate: queryKeyword,
  });
}

/**
 * The validator compiler of the v1 scope: Fastify's own (its Ajv options and formats) with the two
 * keywords. Batch items and the console's "try it" compile the same schemas with it.
 */
export const v1ValidatorCompiler = (
  fastifyAjvCompiler as unknown as () => (
    externalSchemas: object,
    options: { customOptions: object; plugins: unknown[] },
  ) => FastifySchemaCompiler<unknown>
)()({}, { customOptions: {}, plugins: [v1Keywords] });

/**
 * A check of a query built elsewhere (a batch item, a batch body's filters, the console's "try
 * it") against a v1 query schema: canonicalizes `q` in place, as a request's query is, and returns
 * the refusal v1 would answer (worded by `as`, else `naming`), or null.
 */
export function queryCheck(
  schema: { properties: Record<string, ParameterSchema> },
  naming?: Naming,
): (q: Record<string, unknown>, as?: Naming) => AppError | null {
  const validate = v1ValidatorCompiler({ schema, method: "GET", url: "", httpPart: "querystring" }) as ((
    q: unknown,
  ) => boolean) & { errors?: ValidationFailure[] | null };
  return (q, as = naming) =>
    validate(q) ? null : validationRefusal(validate.errors?.[0], schema.properties, q, as);
}

import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { ERROR_CODES, type ErrorCode } from "../../../domain/errors.js";
import { NETWORK_ORDER, NETWORKS } from "../../../domain/networks.js";
import { PROVIDER_ORDER, PROVIDERS } from "../../../domain/providers.js";
import { foldPattern, trimmedPattern } from "./value-pattern.js";

/**
 * Wire schemas of API v1. They validate the query (Ajv) and serialize the responses
 * (fast-json-stringify), and the OpenAPI document is generated from them: one source for all three.
 */

// A plain string with an enum: fast-json-stringify writes it without the per-value branch that a
// union of literals costs.
const networkValue = Type.Unsafe<string>({ type: "string", enum: [...NETWORK_ORDER] });
const providerValue = Type.Unsafe<string>({ type: "string", enum: [...PROVIDER_ORDER] });

const aliasList = (table: Record<string, { aliases: readonly string[]; comingSoon: boolean }>) =>
  Object.entries(table)
    .map(
      ([k, v]) =>
        `${k}${v.comingSoon ? " (coming soon: valid, matches nothing yet)" : ""}${v.aliases.length ? ` (aliases: ${v.aliases.join(", ")})` : ""}`,
    )
    .join("; ");

const namesOf = (table: Record<string, { aliases: readonly string[] }>) =>
  Object.entries(table).flatMap(([k, v]) => [k, ...v.aliases]);

/*
 * The query parameters accept exactly what the server reads (docs/api.md): a value is trimmed, and
 * an empty value counts as absent; network and provider take their wire values and aliases in any
 * case (findNetwork, findProvider); booleans take true/false, 1/0, yes/no in any case. The patterns
 * are generated from the domain tables and the server's own folding (value-pattern.ts). What a
 * pattern cannot say (a value's canonical form, a name's normalization, "domain or
 * fullQualifiedDomain", at with atBlock) the keywords `x-canonical` and `x-query` say
 * (v1.keywords.ts), in the same validation. `title` is what a valid value is, in a partner's
 * words: a refusal quotes it (errors.plugin.ts).
 */
/** An ISO 8601 time with a zone, or a date (v1.params.ts parseIsoTime reads its groups). */
export const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+ -]\d{2}:?\d{2}))?$/;

const NETWORK_NAMES = foldPattern(namesOf(NETWORKS), "upper");

const NetworkParam = Type.String({
  title: `one of ${NETWORK_ORDER.join(", ")} (any case; aliases such as ETH, MATIC, BNB)`,
  pattern: trimmedPattern(NETWORK_NAMES, true),
  "x-canonical": "network",
  description: `Only domains on this network. Case-insensitive; empty: absent. ${aliasList(NETWORKS)}.`,
});

// findProvider also reads a run of spaces or hyphens as "_" (UNSTOPPABLE DOMAINS, namespace-a).
const ProviderParam = Type.String({
  title: `one of ${PROVIDER_ORDER.join(", ")} (any case; aliases such as FNS, UNS, ENS)`,
  pattern: trimmedPattern(foldPattern(namesOf(PROVIDERS), "upper", { char: "_", run: "\\s\\-" }), true),
  "x-canonical": "provider",
  description: `Only domains of this provider. Case-insensitive; empty: absent. ${aliasList(PROVIDERS)}.`,
});

/** The values of a boolean parameter, in lower case: the first three mean true. */
export const BOOLEAN_VALUES = ["true", "1", "yes", "false", "0", "no"] as const;

const booleanParam = (description: string) =>
  Type.String({
    title: "true or false (1/0 and yes/no also work)",
    pattern: trimmedPattern(foldPattern(BOOLEAN_VALUES, "lower"), true),
    "x-canonical": "boolean",
    description: `${description} true/false, 1/0, yes/no, any case; empty: absent (false).`,
  });

const ExplainParam = booleanParam(
  "Add scoreDetails (rule, effect, reason) to each record (resolve and deep-resolve).",
);

const ProvenanceParam = booleanParam(
  "Add provenance to each record: for the owner and every record key the chain event that set it (chainId, blockNumber, blockHash, transactionHash, logIndex, blockTime), and asOf, where the network's index stood (block, blockHash, lagBlocks, secondsBehind); for an ENS name answered live, live (kind offchain or wildcard, resolver, gateways, block, fetchedAt, cacheTtlMs).",
);
const AtParam = Type.String({
  maxLength: 64,
  title: "an ISO 8601 time with a time zone, such as 2024-05-01T12:00:00Z, or a date such as 2024-05-01",
  pattern: trimmedPattern(ISO_TIME.source.slice(1, -1), true),
  "x-canonical": "time",
  description:
    "Time travel: the answer as it was at this time, ISO 8601 with a time zone (2024-05-01T12:00:00Z, 2024-05-01T14:00:00+02:00) or a date (2024-05-01, midnight UTC). Rebuilt from the event journal and ranked with the project's current rules. Not with atBlock. Before a source's first indexed block: 400 AT_BEFORE_INDEX; in the future: 400 AT_AFTER_INDEX.",
  examples: ["2024-05-01T12:00:00Z"],
});
const AtBlockParam = Type.String({
  maxLength: 64,
  title: `NETWORK:BLOCK, one of ${NETWORK_ORDER.join(", ")} (or an alias) and a block number from 0 to ${Number.MAX_SAFE_INTEGER}, such as POLYGON:51234567`,
  // The network part is ASCII only (AT_BLOCK), in any case.
  pattern: trimmedPattern(`${foldPattern(namesOf(NETWORKS), "ascii")}:[0-9]{1,16}`, true),
  "x-canonical": "block",
  description:
    "Time travel: the answer as it was at the end of this block of one network, NETWORK:NUMBER (POLYGON:51234567; network aliases accepted). Answers only from that network's domains. Not with at; a different network parameter is refused. Before the network's first indexed block: 400 AT_BEFORE_INDEX; past its last indexed block: 400 AT_AFTER_INDEX.",
  examples: ["POLYGON:51234567"],
});

/** The options of provenance and time travel: of the three endpoints, and of the batch calls' URL. */
const HISTORY_PARAMS = {
  provenance: Type.Optional(ProvenanceParam),
  at: Type.Optional(AtParam),
  atBlock: Type.Optional(AtBlockParam),
};

/** The filters of every v1 query, and of a batch body. */
export const FILTER_PARAMS = {
  network: Type.Optional(NetworkParam),
  provider: Type.Optional(ProviderParam),
};

const DomainParam = (description: string) =>
  Type.String({
    maxLength: 1024,
    title: "a domain name such as alice.wallet",
    "x-canonical": "trim",
    description,
    examples: ["alice.wallet"],
  });

// domain or fullQualifiedDomain is required: a rule over two parameters, which an OpenAPI query
// parameter cannot state; both are optional here and x-query answers MISSING_PARAMETER.
export const NameQuery = Type.Object(
  {
    domain: Type.Optional(
      DomainParam(
        "Full domain name (second-level label, dot, top-level label); required unless fullQualifiedDomain is given. Trimmed, NFC, case-folded; ENS names per ENSIP-15; punycode accepted. At most 1,024 characters as sent, 1,024 bytes and 255 labels.",
      ),
    ),
    fullQualifiedDomain: Type.Optional(
      DomainParam("Alias of domain; when both are given they must be equal."),
    ),
    ...FILTER_PARAMS,
    explain: Type.Optional(ExplainParam),
    ...HISTORY_PARAMS,
  },
  { "x-query": true },
);
export type NameQuery = Static<typeof NameQuery>;

export const ReverseQuery = Type.Object(
  {
    walletAddress: Type.String({
      maxLength: 128,
      title:
        "a wallet address: 0x followed by 40 hexadecimal digits (prefix and digits in any case), or a base58 Solana address",
      pattern: trimmedPattern("(?:0[xX][0-9a-fA-F]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})", false),
      "x-canonical": "address",
      description:
        "An EVM address, 0x (or 0X) followed by 40 hex digits, any case, compared case-insensitively; or a Solana address, base58 of 32 bytes, case-sensitive (kept as given). Trimmed.",
      examples: [
        "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
        "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
      ],
    }),
    ...FILTER_PARAMS,
    ...HISTORY_PARAMS,
  },
  { "x-query": true },
);
export type ReverseQuery = Static<typeof ReverseQuery>;

/** The batch calls' URL: provenance and time travel, given to every item. */
export const HistoryQuery = Type.Object(HISTORY_PARAMS, { "x-query": true });

/** The batch body's filters, checked as the query parameters are. */
export const FilterQuery = Type.Object(FILTER_PARAMS, { "x-query": true });

const ScoreDetail = Type.Object({
  rule: Type.String({ description: "Name of the scoring rule (docs/scoring.md)." }),
  effect: Type.Number({ description: "Points the rule added (negative: removed)." }),
  reason: Type.String(),
});

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const EventOrigin = Type.Object(
  {
    chainId: Type.Integer(),
    blockNumber: Type.Integer(),
    blockHash: Type.String(),
    transactionHash: Type.String(),
    logIndex: Type.Integer(),
    blockTime: Nullable(
      Type.String({ format: "date-time", description: "ISO 8601 UTC; null when unknown." }),
    ),
    slot: Type.Optional(
      Type.Integer({
        description:
          "SOLANA only: the slot the name's state was read at (blockNumber repeats it; Solana names have no event log, so transactionHash is empty and logIndex the place in the pass).",
      }),
    ),
    account: Type.Optional(
      Type.String({
        description: "SOLANA only: the account the state was read from (the name's account, base58).",
      }),
    ),
  },
  { description: "The chain event that set the value (for SOLANA: the slot and account it was read at)." },
);

const Provenance = Type.Object(
  {
    owner: Nullable(EventOrigin),
    records: Type.Object(
      {},
      {
        additionalProperties: Nullable(EventOrigin),
        description:
          "Per record key of the answer: the event that set it (null when the journal does not hold it).",
      },
    ),
    asOf: Nullable(
      Type.Object(
        {
          block: Type.Integer({
            description: "The last block indexed on the domain's network (its source).",
          }),
          blockHash: Type.String(),
          lagBlocks: Nullable(
            Type.Integer({ description: "Blocks behind the chain head the crawler last saw." }),
          ),
          secondsBehind: Nullable(
            Type.Integer({
              description: "0 at the head; else seconds since the index was last at the head.",
            }),
          ),
        },
        { description: "Where the index of the domain's network stood when it answered." },
      ),
    ),
    live: Type.Optional(
      Type.Object(
        {
          kind: Type.Union([Type.Literal("offchain"), Type.Literal("wildcard")], {
            description: "offchain: the name's own resolver; wildcard: its nearest ancestor's (ENSIP-10).",
          }),
          resolver: Type.String({ description: "The resolver called (lower case)." }),
          gateways: Type.Array(Type.String(), {
            description:
              "The CCIP-Read gateway URL templates that answered; empty when the resolver answered on chain.",
          }),
          block: Type.Integer({ description: "The ETHEREUM block the calls were made at." }),
          fetchedAt: Type.String({
            format: "date-time",
            description: "When the lookup was made (ISO 8601 UTC).",
          }),
          cacheTtlMs: Type.Integer({ description: "How long the answer is reused (0: never)." }),
        },
        {
          additionalProperties: false,
          description:
            "Only for an ENS name answered live (docs/ens-offchain.md): where its records came from; they have no chain event, so records maps each key to null.",
        },
      ),
    ),
  },
  { description: "Only with provenance=true." },
);

function info(withContract: boolean) {
  return Type.Object({
    sld: Type.String({ description: "Every label left of the top-level label." }),
    tld: Type.String(),
    ...(withContract
      ? { smartContractAddress: Type.String({ description: "Registry (token) contract of the domain." }) }
      : {}),
    lastUpdate: Type.String({ format: "date-time", description: "ISO 8601 UTC with milliseconds." }),
    CSAMValidation: Type.Boolean({ description: "The name passed CSAM screening." }),
    KYC: Type.Boolean({ description: "The owner address is on the operator's KYC list." }),
    tags: Type.Array(Type.String()),
  });
}

function domainRecord(forward: boolean) {
  return Type.Object(
    {
      info: info(forward),
      records: Type.Object(
        {},
        {
          additionalProperties: Type.String(),
          description:
            "Record key → value, ordered by key with numeric indexes in numeric order (record.A.2 before record.A.10).",
        },
      ),
      domain: Type.String({ description: "Full domain name." }),
      fullQualifiedDomain: Type.String({ description: "Same as domain." }),
      network: networkValue,
      provider: providerValue,
      ownerAddress: Type.String({ description: "Lower-case owner address." }),
      score: Type.Integer({ minimum: 0, maximum: 100, description: "Higher is preferred on a collision." }),
      spam: Type.Boolean({ description: "Abuse signal." }),
      ...(forward
        ? { scoreDetails: Type.Optional(Type.Array(ScoreDetail, { description: "Only with explain=true." })) }
        : {}),
      provenance: Type.Optional(Provenance),
    },
    { additionalProperties: false },
  );
}

export const ForwardRecord = domainRecord(true);
export const ReverseRecord = domainRecord(false);

export const ErrorEnvelope = Type.Object({
  result: Type.Boolean({ const: false }),
  error: Type.Object({
    // The registry's codes as an enum: a generated client (packages/client) types them.
    code: Type.Unsafe<ErrorCode>({
      type: "string",
      enum: Object.keys(ERROR_CODES),
      description: "Stable code; see docs/errors.md.",
    }),
    message: Type.String({ description: "Human-readable explanation." }),
  }),
});

export function ok<T extends TSchema>(data: T) {
  return Type.Object({ result: Type.Boolean({ const: true }), data });
}

/** The error responses every authenticated v1 route can give. */
export const ERROR_RESPONSES = {
  "4xx": {
    ...ErrorEnvelope,
    description:
      "Bad request (400), missing or invalid api-key (401), not allowed (403), not found (404), too many requests (429).",
  },
  "5xx": {
    ...ErrorEnvelope,
    description:
      "Internal error (500), an ENS name's live lookup failed (502 OFFCHAIN_LOOKUP_FAILED: its wildcard or CCIP-Read resolver or gateway did not answer) or data store unavailable (503). Never carries internal details.",
  },
};

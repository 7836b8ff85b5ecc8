import { DNS_JSON, DNS_MESSAGE } from "../../dns/doh.js";
import { ErrorEnvelope } from "./v1/v1.schemas.js";

// A refusal of the DoH handler itself is a text/plain reason; one of the server's (api-key,
// allowlist, limits, a body over the limit, an unknown content type) is the JSON error envelope.
const refusal = {
  "text/plain": { schema: { type: "string" } },
  "application/json": { schema: JSON.parse(JSON.stringify(ErrorEnvelope)) as object },
};

const record = {
  properties: {
    name: { type: "string" },
    type: { type: "integer" },
    TTL: { type: "integer" },
    data: { type: "string" },
  },
};

/**
 * The JSON form's body. No `type`: application/dns-json is not a JSON media type by its name, so
 * OpenAPI tools that go by the name (Prism) read it as text; `properties` and `required` constrain
 * only an object, so a validator that parses the body checks all of it and one that does not
 * passes it (test/api/openapi-prism.test.ts checks it with Ajv).
 */
const DNS_JSON_SCHEMA = {
  description: "The JSON form (Google/Cloudflare style).",
  required: ["Status", "TC", "RD", "RA", "AD", "CD", "Question"],
  properties: {
    Status: { type: "integer", description: "The DNS rcode." },
    TC: { type: "boolean" },
    RD: { type: "boolean" },
    RA: { type: "boolean" },
    AD: { type: "boolean" },
    CD: { type: "boolean" },
    Question: {
      type: "array",
      items: { properties: { name: { type: "string" }, type: { type: "integer" } } },
    },
    Answer: { type: "array", items: record },
    Authority: { type: "array", items: record },
  },
};

const param = (name: string, description: string, example?: string) => ({
  name,
  in: "query",
  required: false,
  description,
  ...(example !== undefined ? { example } : {}),
  schema: { type: "string" },
});

/**
 * The OpenAPI operations of /dns-query (the routes check their input themselves, so this is
 * documentation only: binary and DNS JSON bodies are no JSON Schema Fastify could validate).
 * `isPublic`: the root endpoint, which takes no key.
 */
export function dohOperations(isPublic: boolean) {
  const security = isPublic ? { security: [] } : {};
  const errors = {
    "4XX": {
      description: isPublic
        ? "Not a DNS query (400), over 65,535 bytes (413), wrong content type (415): a text/plain reason, or the error envelope when the server refuses before the handler (a body over the limit, an unknown content type)."
        : "Not a DNS query (400, text/plain); key, allowlist or limits refusals (401/403/429) and refusals before the handler: the error envelope.",
      content: refusal,
    },
    "5XX": {
      description: "Internal error (500) or data store unavailable (503): the error envelope.",
      content: { "application/json": refusal["application/json"] },
    },
  };
  const answer = {
    description: "The DNS answer; Cache-Control max-age is the answer's smallest TTL.",
    content: {
      [DNS_MESSAGE]: { schema: { type: "string", format: "binary" } },
      [DNS_JSON]: { schema: DNS_JSON_SCHEMA },
    },
  };
  const scope = isPublic ? "public zones, default ranking" : "the key's project settings";
  return {
    get: {
      operationId: isPublic ? "dnsQueryPublic" : "dnsQuery",
      summary: `DNS-over-HTTPS (RFC 8484) GET, or the JSON form (${scope}).`,
      description:
        "Either dns (an RFC 8484 DNS message, base64url without padding; answer application/dns-message) or name and type (answer application/dns-json). docs/dns.md.",
      ...security,
      parameters: [
        param("dns", "RFC 8484 DNS query message, base64url without padding."),
        param("name", "JSON form: the name to look up.", "alice.wallet"),
        param("type", "JSON form: the record type (default A).", "A"),
        param("cd", "JSON form: checking disabled (1 or true)."),
      ],
      responses: { "200": answer, ...errors },
    },
    post: {
      operationId: isPublic ? "dnsQueryPublicPost" : "dnsQueryPost",
      summary: `DNS-over-HTTPS (RFC 8484) POST (${scope}).`,
      ...security,
      requestBody: {
        required: true,
        content: { [DNS_MESSAGE]: { schema: { type: "string", format: "binary" } } },
      },
      responses: { "200": answer, ...errors },
    },
  };
}

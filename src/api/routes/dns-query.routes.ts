import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  buildDohJson,
  buildJsonQuery,
  buildMaxAge,
  DNS_JSON,
  DNS_MESSAGE,
  decodeDnsParam,
  MAX_DOH_MESSAGE,
} from "../../dns/doh.js";
import { answerQuery } from "../../dns/query-handler.js";
import type { ZoneLookup } from "../../dns/zone.js";
import { dohOperations } from "./dns-query.openapi.js";

export const DOH_PATH = "/dns-query";

export interface DnsQueryRoutesOptions {
  /** The zones to answer from; a function when they depend on the caller (a project's settings). */
  lookup: ZoneLookup | ((request: FastifyRequest) => ZoneLookup);
  /** The root endpoint, open to all (documented without the api-key). Default false. */
  isPublic?: boolean;
}

interface DohQuery {
  dns?: string;
  name?: string;
  type?: string;
  cd?: string;
}

function problem(reply: FastifyReply, status: number, message: string) {
  return reply
    .code(status)
    .header("cache-control", "no-store")
    .type("text/plain; charset=utf-8")
    .send(`${message}\n`);
}

/**
 * DNS-over-HTTPS (RFC 8484) at /dns-query: GET `?dns=` (base64url, no padding), POST
 * `application/dns-message`, and the JSON form `?name=&type=`. Registered twice: at the root,
 * public (no API key, no project rules), and in the v1 scope, where the api-key hook, allowlists,
 * rate limits, quota and usage apply and answers follow the key's project settings.
 * The wire answer is the UDP server's (one query handler; DoH never truncates). docs/dns.md.
 */
export async function dnsQueryRoutes(scope: FastifyInstance, opts: DnsQueryRoutesOptions): Promise<void> {
  scope.addContentTypeParser(
    DNS_MESSAGE,
    { parseAs: "buffer", bodyLimit: MAX_DOH_MESSAGE },
    (_req, body, done) => done(null, body),
  );

  const lookupOf = (request: FastifyRequest): ZoneLookup =>
    typeof opts.lookup === "function" ? opts.lookup(request) : opts.lookup;

  async function answerWire(request: FastifyRequest, reply: FastifyReply, query: Buffer) {
    const answer = await answerQuery(query, lookupOf(request), "doh");
    // Not a DNS query at all (shorter than a header, or a response): the request is malformed.
    if (answer === null) return problem(reply, 400, "not a DNS query message");
    return reply
      .header("cache-control", `max-age=${buildMaxAge(answer)}`)
      .type(DNS_MESSAGE)
      .send(answer);
  }

  const doc = dohOperations(opts.isPublic ?? false);
  scope.get<{ Querystring: DohQuery }>(DOH_PATH, { schema: { openapi: doc.get } }, async (request, reply) => {
    const q = request.query;
    if (typeof q.dns === "string") {
      const query = decodeDnsParam(q.dns);
      if (query === null) return problem(reply, 400, "dns is not base64url without padding");
      if (query.length > MAX_DOH_MESSAGE) return problem(reply, 413, "the DNS message is over 65535 bytes");
      return answerWire(request, reply, query);
    }
    if (typeof q.name === "string") {
      const query = buildJsonQuery(q.name, q.type ?? "A", q.cd === "1" || q.cd === "true");
      if (query === null) return problem(reply, 400, "name or type is not valid");
      const answer = await answerQuery(query, lookupOf(request), "doh");
      if (answer === null) return problem(reply, 400, "name or type is not valid");
      return reply
        .header("cache-control", `max-age=${buildMaxAge(answer)}`)
        .type(`${DNS_JSON}; charset=utf-8`)
        .send(JSON.stringify(buildDohJson(answer)));
    }
    return problem(reply, 400, "missing dns (RFC 8484) or name (JSON form) parameter");
  });

  scope.post(DOH_PATH, { schema: { openapi: doc.post } }, async (request, reply) => {
    const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (type !== DNS_MESSAGE) return problem(reply, 415, `the body must be ${DNS_MESSAGE}`);
    const body = request.body as Buffer;
    return answerWire(request, reply, body);
  });
}

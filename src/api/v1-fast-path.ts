import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "node:http";
import type { FastifyRequest } from "fastify";
import { checkAccess } from "../accounts/access-rules.js";
import { type LimitDecision, rateLimitField, rateLimitPolicyField } from "../accounts/api-limits.js";
import type { VerifiedKey } from "../accounts/api-keys.js";
import type { ApiKeyVerifier } from "../accounts/api-keys.js";
import type { ConsoleServices } from "../accounts/console-services.js";
import type { Plan } from "../accounts/plans.js";
import { keyRefusal } from "./plugins/api-key.plugin.js";
import type { ApiMetrics } from "./plugins/api-metrics.plugin.js";
import { decidedAtTheDoor } from "./plugins/rate-limit.plugin.js";
import { JSON_CONTENT_TYPE } from "./routes/v1/record-json.js";
import type { V1AnswerCache } from "./v1-answer-cache.js";

/** Requests remembered at most (a few hundred bytes each); the oldest go first. */
const MAX_LEARNED = 20_000;
/** Longer URLs are left to Fastify (a name is at most a few hundred bytes): bounds the memory. */
const MAX_URL = 1024;

/**
 * A request the v1 scope admitted and answered from the answer cache (v1-answer-cache.ts), as the
 * fast path replays it: under which key it was admitted (the verifier's very object: a reload, a
 * revocation or a settings change gives another, and the request goes through the hooks again),
 * its endpoint, and its answer's key in the answer cache.
 */
interface Learned {
  verified: VerifiedKey;
  /** The project's plan (a function of the verified project and the configuration). */
  plan: Plan;
  endpoint: string;
  answerKey: string;
  /** The route's pattern, the metrics' label. */
  route: string;
}

export interface V1FastPathOptions {
  prefix: string;
  verifier: ApiKeyVerifier;
  services: ConsoleServices;
  answers: V1AnswerCache;
  metrics: ApiMetrics;
  /** The context's clock: the key's expiry, the ranking's now, usage times (as the hooks use it). */
  clock: () => number;
  /** Lower-cased header of the caller's country (geography rules), when configured. */
  countryHeader: string | undefined;
  /** The security headers of every answer (security-headers.plugin.ts). */
  securityHeaders: ReadonlyArray<[string, string]>;
  /** True once the app is closing: every request then goes to Fastify's shutdown gate. */
  closing: () => boolean;
}

/**
 * The v1 fast path: a repeated GET of resolve, deep-resolve or reverse-resolve whose answer is in
 * the answer cache, served before Fastify routes it, with the same checks in the same order and the
 * same bytes out (docs/api.md, "The fast path").
 *
 * A request is served here only when an identical one (the same raw URL, `api-key` and country
 * header, no Origin, no body) went through every hook and the route under the same verified key,
 * and when, now: the key is still the verifier's cached object (the key cache's TTL, revocations
 * and settings changes all replace it) and neither expired nor outside its endpoints; the project's
 * allowlists are cached and admit the caller's IP; the answer is still in the answer cache (the
 * map's read version, the ranking's clock boundary). Then it counts the request against the rate
 * and the quota (the same limiter), answers with the hooks' headers, and records usage and metrics
 * as the hooks do. Anything else, including a refusal by the limits, goes to Fastify, which answers
 * it as before; a limit decision already taken goes with it (decidedAtTheDoor), so nothing is
 * counted twice.
 *
 * What it saves is the framework's work per request (routing, the request and reply objects, the
 * query parsing and validation, eleven hooks), not any check.
 */
export class V1FastPath {
  private readonly learned = new Map<string, Learned>();
  /** The answer's header list, names and values flat; `base` is where the fixed part ends. */
  private readonly head: string[];
  private readonly base: number;

  constructor(private readonly o: V1FastPathOptions) {
    const security = o.securityHeaders.flat();
    this.base = security.length;
    this.head = [
      ...security,
      "content-type",
      JSON_CONTENT_TYPE,
      "ratelimit-policy",
      "",
      "ratelimit",
      "",
      "content-length",
      "",
    ];
  }

  private memoKey(apiKey: string, country: string | undefined, url: string): string {
    return `${apiKey}\u0000${country ?? ""}\u0000${url}`;
  }

  /** The country header's value as the fast path keys it; null: a request it leaves to Fastify. */
  private countryOf(req: IncomingMessage): string | undefined | null {
    const name = this.o.countryHeader;
    if (name === undefined) return undefined;
    const v = req.headers[name];
    return v === undefined || typeof v === "string" ? v : null;
  }

  /**
   * Called by the v1 endpoints when they answer a plain request from (or into) the answer cache:
   * remembers it when the fast path could replay it.
   */
  learn(request: FastifyRequest, endpoint: string, answerKey: string): void {
    const raw = request.raw;
    const apiKey = raw.headers["api-key"];
    if (
      raw.method !== "GET" ||
      raw.httpVersionMajor !== 1 ||
      typeof apiKey !== "string" ||
      raw.headers.origin !== undefined ||
      hasBody(raw) ||
      request.project === null
    )
      return;
    // The key cache's entry the request was admitted under (not one loaded since).
    const verified = this.o.verifier.verifyCached(apiKey);
    if (verified === null || verified === undefined || verified.key !== request.apiKey) return;
    const country = this.countryOf(raw);
    if (country === null || raw.url === undefined || raw.url.length > MAX_URL) return;
    const key = this.memoKey(apiKey, country, raw.url);
    if (this.learned.size >= MAX_LEARNED && !this.learned.has(key)) {
      const oldest = this.learned.keys().next().value;
      if (oldest !== undefined) this.learned.delete(oldest);
    }
    const plan = this.o.services.projects.planOf(verified.project);
    this.learned.set(key, { verified, plan, endpoint, answerKey, route: `${this.o.prefix}/${endpoint}` });
  }

  /**
   * Serves `req` when it can (true), else returns false and leaves `req` untouched for Fastify.
   * `fallback` is Fastify's handler, for a request this path took but then cannot answer.
   */
  serve(req: IncomingMessage, res: ServerResponse, fallback: Fallback): boolean {
    const url = req.url;
    if (req.method !== "GET" || url === undefined || !url.startsWith(this.o.prefix) || this.o.closing())
      return false;
    const headers = req.headers;
    const apiKey = headers["api-key"];
    if (
      typeof apiKey !== "string" ||
      headers.origin !== undefined ||
      hasBody(req) ||
      req.httpVersionMajor !== 1
    )
      return false;
    const country = this.countryOf(req);
    if (country === null) return false;
    const e = this.learned.get(this.memoKey(apiKey, country, url));
    if (e === undefined) return false;
    const v = this.o.verifier.verifyCached(apiKey);
    if (v !== e.verified || v === null) return false;
    if (
      (v.key.expiresAt !== null || v.key.scopes.endpoints !== undefined) &&
      keyRefusal(v.key, e.endpoint, this.o.clock()) !== null
    )
      return false;
    const services = this.o.services;
    const access = services.access.cached(v.project.id);
    if (access === undefined) return false;
    if (
      checkAccess(
        access,
        services.clientIp(req.socket.remoteAddress, headers["x-forwarded-for"]),
        undefined,
      ) !== "ok"
    )
      return false;
    if (this.o.answers.get(e.answerKey, this.o.clock()) === undefined) return false;
    const started = performance.now();
    const decided = (decision: LimitDecision) => {
      services.alerts.observe(v.key, v.project, decision);
      // Counted: whatever happens next, Fastify (if it answers) takes this decision.
      decidedAtTheDoor.set(req, decision);
      // The caller went away meanwhile: nothing to send (its request was counted, as the hooks count it).
      if (res.destroyed) return;
      const body = decision.allowed ? this.o.answers.get(e.answerKey, this.o.clock()) : undefined;
      if (body === undefined) return fallback(req, res);
      // The answer's headers in the hooks' order: the security headers (onRequest), the
      // content type (the route), the limits (onSend), the length. writeHead reads the list at
      // once, so one list serves every answer.
      const head = this.head;
      head[this.base + 3] = rateLimitPolicyField(decision.state);
      head[this.base + 5] = rateLimitField(decision.state);
      head[this.base + 7] = String(body.length);
      res.writeHead(200, head);
      res.end(body);
      const latencyMs = performance.now() - started;
      this.o.metrics.fastAnswer(e.route, latencyMs / 1000);
      services.usage.record({
        projectId: v.project.id,
        keyId: v.key.id,
        endpoint: e.endpoint,
        status: 200,
        latencyMs,
        quota: true,
        at: this.o.clock(),
      });
    };
    // An answer that could not be written is Fastify's to give, and one cut off halfway ends its
    // connection.
    const failed = () => {
      if (!res.headersSent) fallback(req, res);
      else res.destroy();
    };
    // Limits counted in this process (the memory backend): decided now, without a promise.
    const now = services.limits.consumeNow(v.key.id, v.project.id, e.plan);
    if (now !== undefined) {
      try {
        decided(now);
      } catch {
        failed();
      }
      return true;
    }
    services.limits
      .consume(v.key.id, v.project.id, e.plan)
      // The limiter failed: Fastify asks it again and answers whatever it says.
      .then(decided, () => fallback(req, res))
      // Never an unhandled rejection.
      .catch(failed);
    return true;
  }

  /** Puts the fast path in front of Fastify's request listener on `server`. */
  install(server: Pick<Server, "listeners" | "removeAllListeners" | "on">): void {
    const handlers = server.listeners("request") as Fallback[];
    server.removeAllListeners("request");
    const fastify: Fallback = (req, res) => {
      for (const h of handlers) h.call(server, req, res);
    };
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      if (!this.serve(req, res, fastify)) fastify(req, res);
    });
  }

  /** Requests remembered (tests). */
  get size(): number {
    return this.learned.size;
  }
}

type Fallback = (req: IncomingMessage, res: ServerResponse) => void;

function hasBody(req: IncomingMessage): boolean {
  return req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined;
}

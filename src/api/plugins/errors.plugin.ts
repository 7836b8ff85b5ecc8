import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { connectionFailureOf } from "../../domain/connection-failure.js";
import { AppError, ERROR_CODES, type ErrorCode, isAppError } from "../../domain/errors.js";
import { createStoreOutageLog, type StoreOutageLog } from "./store-outage.js";
import { QUERY_DUPLICATES, QUERY_ERROR, QUERY_MALFORMED, type ParsedQuery } from "../query-string.js";

/**
 * The one place where errors become HTTP answers. Every failure, Fastify's own included (schema
 * validation, unknown route, wrong method, body limits, malformed URLs, client errors on the raw
 * socket), ends as `{ result: false, error: { code, message } }` with the status of ERROR_CODES.
 * A 5xx answer carries only the registry's message: never a stack or an internal message.
 */

declare module "fastify" {
  interface FastifyInstance {
    /** The store outage's log (store-outage.ts), when the app was given the store's ping. */
    storeOutage?: StoreOutageLog;
    /** True once the app is closing: the shutdown gate then refuses every request (SHUTTING_DOWN). */
    closing(): boolean;
  }
}

interface ErrorEnvelope {
  result: false;
  error: { code: ErrorCode; message: string };
}

export function errorEnvelope(code: ErrorCode, message?: string): ErrorEnvelope {
  return { result: false, error: { code, message: message ?? ERROR_CODES[code].message } };
}

/** Which code a schema failure of a query parameter maps to; others get INVALID_PARAMETER. */
const PARAMETER_CODES: Record<string, ErrorCode> = {
  domain: "INVALID_DOMAIN",
  fullQualifiedDomain: "INVALID_DOMAIN",
  network: "INVALID_NETWORK",
  provider: "INVALID_PROVIDER",
  walletAddress: "INVALID_ADDRESS",
};

// Fastify's own error codes whose status is not enough to pick ours.
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  FST_ERR_BAD_URL: "BAD_REQUEST",
  FST_ERR_MAX_PARAM_LENGTH: "PARAMETER_TOO_LONG",
};

const STATUS_CODES: Record<number, ErrorCode> = {
  400: "BAD_REQUEST",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  408: "REQUEST_TIMEOUT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "RATE_LIMITED",
  431: "HEADERS_TOO_LARGE",
  503: "STORE_UNAVAILABLE",
};

/** Echoes a caller's value in a message: short, and JSON-quoted so control characters show. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

/** The keywords of a query parameter's schema that a refusal is worded from. */
export interface ParameterSchema {
  /** What a valid value is, in a partner's words ("one of ETHEREUM, POLYGON …"). */
  title?: string;
}

/** How a refusal names what failed: a query parameter (the default), a body field, a batch input. */
export interface Naming {
  what?: string;
  /** The name shown for a parameter (the console's "address" for walletAddress, "domains[3]"). */
  rename?: (parameter: string) => string;
}

/** Ajv's first error of a failed validation (v1.keywords.ts adds `parameter`, `code`, `words`). */
export interface ValidationFailure {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/**
 * The one wording of a refused parameter (or a body field standing for one), for a person: the
 * parameter's name, what a valid value is (its schema's `title`) and the value as sent (trimmed),
 * never the validator's own text (a regular expression, a JSON pointer, a type name). Only a
 * parameter with a `title` is worded so (the v1 parameters, docs/api.md); others keep the short
 * form. The AppError's `details.parameter` names the parameter.
 *
 * @example
 * validationRefusal({ keyword: "pattern", instancePath: "/network", params: {} }, NameQuery.properties, { network: " MARS " })
 * // → INVALID_NETWORK: The parameter "network" must be one of ETHEREUM, …; got "MARS".
 */
export function validationRefusal(
  v: ValidationFailure | undefined,
  properties: Record<string, ParameterSchema> | undefined,
  data: unknown,
  { what = "parameter", rename }: Naming = {},
): AppError {
  if (v === undefined) return new AppError("BAD_REQUEST", "The request is not valid.");
  const { keyword, params } = v;
  const param =
    typeof params.parameter === "string"
      ? params.parameter
      : keyword === "required"
        ? String(params.missingProperty ?? "")
        : (v.instancePath.split("/")[1] ?? "");
  const name = rename?.(param) ?? param;
  const details = { parameter: param };
  const code = (typeof params.code === "string" ? params.code : undefined) as ErrorCode | undefined;
  // A rule over several parameters words itself whole; a name's refusal words what is wrong with it.
  if (code !== undefined && typeof params.message === "string")
    return new AppError(code, params.message, { details });
  if (code !== undefined && typeof params.words === "string")
    return new AppError(code, `The ${what} "${name}" ${params.words}`, { details });
  const schema = properties?.[param];
  const value = (data as Record<string, unknown> | undefined)?.[param];
  const sent = typeof value === "string" ? value.trim() : undefined;
  const titled = typeof schema?.title === "string";
  const limit = params.limit;
  if (keyword === "required" || (keyword === "minLength" && limit === 1) || (titled && sent === ""))
    return new AppError("MISSING_PARAMETER", `The ${what} "${name}" is required (it is missing or empty).`, {
      details,
    });
  if (keyword === "maxLength")
    return new AppError(
      "PARAMETER_TOO_LONG",
      `The ${what} "${name}" is longer than ${String(limit)} characters.`,
      {
        details,
      },
    );
  const refused = PARAMETER_CODES[param] ?? "INVALID_PARAMETER";
  if (titled && sent !== undefined)
    return new AppError(refused, `The ${what} "${name}" must be ${schema?.title}; got ${quote(sent)}.`, {
      details,
    });
  return new AppError(refused, `The ${what} "${name}" has an invalid value.`, { details });
}

/** A schema failure of a request (Fastify's validation error), worded by validationRefusal. */
function fromValidation(err: FastifyError, request: FastifyRequest | undefined): AppError {
  const isQuery = err.validationContext === "querystring" && request !== undefined;
  const properties = isQuery
    ? (
        request.routeOptions.schema?.querystring as
          | { properties?: Record<string, ParameterSchema> }
          | undefined
      )?.properties
    : undefined;
  return validationRefusal(
    err.validation?.[0] as ValidationFailure | undefined,
    properties,
    isQuery ? request.query : undefined,
  );
}

/**
 * A service other than the store that could not be reached: 503 UPSTREAM_UNAVAILABLE, retryable,
 * with what it was in `details` for the log (never in the answer: a 5xx carries the registry's
 * text). The store's own failures never get here: each backend maps them to STORE_UNAVAILABLE.
 */
function upstreamUnavailable(e: unknown): AppError | null {
  const f = connectionFailureOf(e);
  if (f !== null) {
    const port = f.port === undefined ? "" : `:${f.port}`;
    const where = f.address !== undefined ? `${f.address}${port}` : (f.hostname ?? "unknown");
    return new AppError("UPSTREAM_UNAVAILABLE", undefined, {
      cause: e,
      retryable: true,
      details: { upstream: where, syscall: f.syscall ?? null, errno: f.code },
    });
  }
  if (isRedisClientUnreachable(e))
    return new AppError("UPSTREAM_UNAVAILABLE", undefined, {
      cause: e,
      retryable: true,
      details: { upstream: "redis", syscall: null, errno: null },
    });
  return null;
}

// ioredis never rethrows the socket's error to a command: while Redis is away a command fails with
// one of these (the socket's ECONNREFUSED goes to the client's "error" event, logged where the
// client is made: accounts/console-services.ts).
const REDIS_CLIENT_FAILURES = new Set([
  "Connection is closed.",
  "Stream isn't writeable and enableOfflineQueue options is false",
]);

function isRedisClientUnreachable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return e.name === "MaxRetriesPerRequestError" || REDIS_CLIENT_FAILURES.has(e.message);
}

/** Maps anything thrown to an AppError; the original stays as the cause for the log. */
export function toAppError(e: unknown, request?: FastifyRequest): AppError {
  if (isAppError(e)) return e;
  const err = e as FastifyError;
  if (err && typeof err === "object") {
    if (Array.isArray(err.validation)) return fromValidation(err, request);
    const upstream = upstreamUnavailable(e);
    if (upstream) return upstream;
    const byCode = typeof err.code === "string" ? FASTIFY_CODES[err.code] : undefined;
    if (byCode) return new AppError(byCode, undefined, { cause: e });
    const status = typeof err.statusCode === "number" ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      // Fastify's 4xx messages describe the request (a JSON body that does not parse, …), which
      // is the caller's own input: safe to return.
      const code = STATUS_CODES[status] ?? "BAD_REQUEST";
      return new AppError(code, typeof err.message === "string" ? err.message.slice(0, 300) : undefined, {
        cause: e,
      });
    }
  }
  return new AppError("INTERNAL_ERROR", undefined, { cause: e });
}

function send(reply: FastifyReply, error: AppError): FastifyReply {
  const { status } = ERROR_CODES[error.code];
  // 5xx: the registry's text only, whatever the error said.
  const message = status >= 500 ? ERROR_CODES[error.code].message : error.message;
  if (error.code === "METHOD_NOT_ALLOWED" && typeof error.details?.allow === "string")
    reply.header("allow", error.details.allow);
  // HTTP/2 has no Connection header (RFC 9113 §8.2.2: setting it throws); the session's GOAWAY does its job.
  if (error.code === "SHUTTING_DOWN" && reply.request.raw.httpVersionMajor < 2)
    reply.header("connection", "close");
  if (RETRY_SOON.has(error.code)) reply.header("retry-after", "1");
  return reply.code(status).type("application/json; charset=utf-8").send(errorEnvelope(error.code, message));
}

/** Refusals of a moment (a store or upstream out of reach, a shutdown): Retry-After 1, API and console. */
export const RETRY_SOON: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "STORE_UNAVAILABLE",
  "SHUTTING_DOWN",
  "UPSTREAM_UNAVAILABLE",
]);

function log(request: FastifyRequest, error: AppError): void {
  const { status } = ERROR_CODES[error.code];
  // The store away: its state changes are logged once (store-outage.ts), not every refusal.
  const outage = request.server.storeOutage as StoreOutageLog | undefined;
  if (error.code === "STORE_UNAVAILABLE" && outage !== undefined) {
    outage.refused(error.cause ?? error);
    return;
  }
  // The edge logs once: 5xx with the cause (at error), 4xx only at debug (they are the caller's).
  if (error.code === "UPSTREAM_UNAVAILABLE")
    request.log.error({ err: error.cause, code: error.code, ...error.details }, "upstream unreachable");
  else if (status >= 500)
    request.log.error({ err: error.cause ?? error, code: error.code }, "request failed");
  else request.log.debug({ code: error.code, msg: error.message }, "request refused");
}

/** Fastify `frameworkErrors`: malformed URLs, caught while routing, before any route runs. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const e = toAppError(error);
  log(request, e);
  send(reply, e);
}

/** Fastify `clientErrorHandler`: errors of the HTTP parser, answered on the raw socket. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const code: ErrorCode =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? "REQUEST_TIMEOUT"
      : err.code === "HPE_HEADER_OVERFLOW"
        ? "HEADERS_TOO_LARGE"
        : "BAD_REQUEST";
  const body = JSON.stringify(errorEnvelope(code));
  const { status } = ERROR_CODES[code];
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${code}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/**
 * Installs the error handler, the 404/405 handler, the query-string checks and the shutdown gate
 * on the root instance (not through register: they must not be encapsulated).
 */
export function installErrorHandling(
  app: FastifyInstance,
  opts: {
    /** Whether the store answers: after a refusal for STORE_UNAVAILABLE, asked until it does. */
    storePing?: () => Promise<boolean>;
  } = {},
): void {
  if (opts.storePing !== undefined) {
    const outage = createStoreOutageLog(app.log, opts.storePing);
    app.decorate("storeOutage", outage);
    app.addHook("onClose", (_app, done) => {
      outage.close();
      done();
    });
  }
  // Path → methods of every route, to tell 405 (known path, other method) from 404.
  const methods = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    const list = Array.isArray(route.method) ? route.method : [route.method];
    const path = trimSlash(route.url ?? route.path);
    const set = methods.get(path) ?? new Set<string>();
    for (const m of list) set.add(m);
    methods.set(path, set);
  });

  let closing = false;
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });
  // Read by what answers in front of Fastify (v1-fast-path.ts), so that it yields to this gate.
  app.decorate("closing", () => closing);
  app.addHook("onRequest", (_request, _reply, done) => {
    done(closing ? new AppError("SHUTTING_DOWN") : undefined);
  });

  // Runs after the v1 scope's onRequest (authentication): an unauthenticated caller learns
  // nothing about the query's validity.
  app.addHook("preValidation", (request, _reply, done) => {
    const q = request.query as ParsedQuery | undefined;
    if (q && typeof q === "object" && !request.is404) {
      const err = q[QUERY_ERROR];
      if (err) return done(err);
      const dups = q[QUERY_DUPLICATES];
      const bad = q[QUERY_MALFORMED];
      if (dups || bad) {
        const declared = (
          request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined
        )?.properties;
        const isDeclared = (k: string) => declared !== undefined && Object.hasOwn(declared, k);
        const undecodable = bad?.find(isDeclared);
        if (undecodable !== undefined) {
          return done(
            new AppError(
              "BAD_REQUEST",
              `The parameter "${undecodable}" is not valid URL encoding: a "%" must be followed by two hexadecimal digits (write a literal "%" as %25).`,
            ),
          );
        }
        const repeated = dups?.find(isDeclared);
        if (repeated !== undefined) {
          return done(
            new AppError(
              "INVALID_PARAMETER",
              `The parameter "${repeated}" is given more than once; give it once.`,
            ),
          );
        }
      }
    }
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const e = toAppError(error, request);
    log(request, e);
    return send(reply, e);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = trimSlash(request.url.split("?", 1)[0]);
    const allowed = methods.get(path);
    const e =
      allowed && !allowed.has(request.method)
        ? new AppError(
            "METHOD_NOT_ALLOWED",
            `${request.method} is not allowed here; use ${[...allowed].join(" or ")}.`,
            {
              details: { allow: [...allowed].join(", ") },
            },
          )
        : new AppError("NOT_FOUND", "No such endpoint.");
    log(request, e);
    return send(reply, e);
  });
}

function trimSlash(p: string): string {
  return p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p;
}

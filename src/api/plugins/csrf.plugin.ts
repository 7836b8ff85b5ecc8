import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ConsoleServices } from "../../accounts/console-services.js";
import { safeEqual, sign } from "../../accounts/tokens.js";
import type { Config } from "../../config/config.schema.js";
import { AppError } from "../../domain/errors.js";
import { csrfCookieName, parseCookies, setCookie } from "./session.plugin.js";

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const CSRF_HEADER = "x-csrf-token";

/** The CSRF token of a session: an HMAC of the session id, so it needs no storage and dies with it. */
export function sessionCsrfToken(secret: string, sessionId: string): string {
  return sign(secret, "csrf-session", sessionId);
}

/** A pre-session token (login, registration, reset): a nonce and its HMAC, double-submitted. */
export function issuePreSessionToken(reply: FastifyReply, secret: string, config: Config): string {
  const nonce = randomBytes(18).toString("base64url");
  const token = `${nonce}.${sign(secret, "csrf-pre", nonce)}`;
  setCookie(reply, config, csrfCookieName(config), token, 2 * 3600, "Strict");
  return token;
}

function validPreSession(secret: string, token: string): boolean {
  const dot = token.indexOf(".");
  if (dot <= 0 || token.length > 200) return false;
  return safeEqual(token.slice(dot + 1), sign(secret, "csrf-pre", token.slice(0, dot)));
}

/**
 * CSRF protection of every state-changing console route (POST, PUT, PATCH, DELETE):
 *
 * 1. Origin: when the browser sends `Origin`, it must be PUBLIC_URL's origin; `Sec-Fetch-Site`,
 *    when sent, must be `same-origin` or `none`.
 * 2. Token: the `X-CSRF-Token` header must carry the session's token (GET /console/api/account or
 *    the login answer). Without a session (login, registration, reset) it must equal the
 *    `omniname_csrf` cookie set by GET /console/api/csrf, and that value must carry our HMAC.
 *
 * A custom header cannot be sent cross-origin without a CORS preflight, which the console never
 * grants, and an attacker cannot read the token; the Origin check is a second, independent wall.
 */
export function installCsrf(scope: FastifyInstance, services: ConsoleServices, config: Config): void {
  scope.addHook("onRequest", async (request: FastifyRequest) => {
    if (!UNSAFE.has(request.method)) return;
    const origin = request.headers.origin;
    // Read per request: with PORT=0 the derived PUBLIC_URL is known only once the port is bound.
    if (origin !== undefined && origin !== config.publicUrl)
      throw new AppError("CSRF_REJECTED", "Cross-origin request refused.");
    const site = request.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin" && site !== "none")
      throw new AppError("CSRF_REJECTED", "Cross-site request refused.");
    const token = request.headers[CSRF_HEADER];
    if (typeof token !== "string" || token.length === 0 || token.length > 200)
      throw new AppError("CSRF_REJECTED", `The ${CSRF_HEADER} header is missing.`);
    if (request.session !== null) {
      if (!safeEqual(token, sessionCsrfToken(services.secret, request.session.sessionId)))
        throw new AppError("CSRF_REJECTED", "The CSRF token does not match the session.");
      return;
    }
    const cookie = parseCookies(request.headers.cookie)[csrfCookieName(config)];
    if (cookie === undefined || !safeEqual(token, cookie) || !validPreSession(services.secret, token))
      throw new AppError(
        "CSRF_REJECTED",
        "The CSRF token does not match its cookie (GET /console/api/csrf first).",
      );
  });
}

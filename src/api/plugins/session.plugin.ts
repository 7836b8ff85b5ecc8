import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SessionInfo } from "../../accounts/accounts.service.js";
import type { ConsoleServices } from "../../accounts/console-services.js";
import { can, type Permission, type Role } from "../../accounts/permissions.js";
import type { Config } from "../../config/config.schema.js";
import { AppError } from "../../domain/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The signed-in account of a console request, or null. */
    session: SessionInfo | null;
    /** The caller's role in the project named by `:projectId`, once the permission hook ran. */
    membership: { projectId: number; role: Role } | null;
  }
  interface FastifyContextConfig {
    /** "public": no session needed. Default: a session is required. */
    auth?: "public" | "session";
    /** A project route a member may use while the project's two-factor rule stops them (leave). */
    twoFactorExempt?: boolean;
    /** The permission a project route needs (src/accounts/permissions.ts, docs/permissions.md). */
    permission?: Permission;
  }
}

/** Reads the Cookie header (RFC 6265 pairs); the first of two same-named cookies wins. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!Object.hasOwn(out, name)) out[name] = value;
  }
  return out;
}

function isHttps(config: Pick<Config, "publicUrl">): boolean {
  return config.publicUrl.startsWith("https://");
}

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * subrequests or POSTs), and on https `Secure` with the `__Host-` prefix, which pins it to this
 * host and path `/` so a sibling subdomain cannot plant or shadow it.
 */
export function sessionCookieName(config: Pick<Config, "publicUrl">): string {
  return isHttps(config) ? "__Host-omniname_session" : "omniname_session";
}

export function csrfCookieName(config: Pick<Config, "publicUrl">): string {
  return isHttps(config) ? "__Host-omniname_csrf" : "omniname_csrf";
}

export function setCookie(
  reply: FastifyReply,
  config: Pick<Config, "publicUrl">,
  name: string,
  value: string,
  maxAgeS: number,
  sameSite: "Lax" | "Strict" = "Lax",
): void {
  const attrs = [`${name}=${value}`, "Path=/", `Max-Age=${maxAgeS}`, "HttpOnly", `SameSite=${sameSite}`];
  if (isHttps(config)) attrs.push("Secure");
  const prev = reply.getHeader("set-cookie");
  const list = prev === undefined ? [] : Array.isArray(prev) ? prev.map(String) : [String(prev)];
  reply.header("set-cookie", [...list, attrs.join("; ")]);
}

export function sessionTokenOf(
  request: FastifyRequest,
  config: Pick<Config, "publicUrl">,
): string | undefined {
  return parseCookies(request.headers.cookie)[sessionCookieName(config)];
}

function projectIdOf(request: FastifyRequest): number | null {
  const raw = (request.params as Record<string, unknown> | undefined)?.projectId;
  if (raw === undefined) return null;
  if (typeof raw !== "string" || !/^[1-9]\d{0,14}$/.test(raw))
    throw new AppError("NOT_FOUND", "No such project.");
  return Number(raw);
}

/**
 * Console authentication and authorization, both in onRequest (before the body is parsed or
 * validated, so an anonymous caller learns nothing about a route but that it needs a session):
 *
 * 1. the session cookie is looked up (request.session);
 * 2. routes not marked `auth: "public"` need a session (401 UNAUTHENTICATED);
 * 3. routes with a `permission` and a `:projectId` need a membership in that project whose role
 *    holds the permission. A non-member gets 404 NOT_FOUND, exactly as for a project that does not
 *    exist, so another team's project ids cannot be probed; a member without the permission gets
 *    403 FORBIDDEN;
 * 4. a project that requires two-factor sign-in answers 403 TWO_FACTOR_REQUIRED to a member who
 *    has not turned it on.
 */
export function installSession(scope: FastifyInstance, services: ConsoleServices, config: Config): void {
  scope.decorateRequest("session", null);
  scope.decorateRequest("membership", null);
  scope.addHook("onRequest", async (request) => {
    request.session = await services.accounts.authenticate(sessionTokenOf(request, config));
    const cfg = request.routeOptions.config;
    if (cfg?.auth === "public") return;
    if (request.session === null) throw new AppError("UNAUTHENTICATED");
    const projectId = projectIdOf(request);
    if (cfg?.permission === undefined) return;
    if (projectId === null) throw new AppError("INTERNAL_ERROR", "A permission route without :projectId");
    const role = await services.projects.repo.findRole(projectId, request.session.account.id);
    if (role === null) throw new AppError("NOT_FOUND", "No such project.");
    if (!can(role, cfg.permission)) throw new AppError("FORBIDDEN");
    // A project that requires two factors: its members without them see nothing of it until they
    // turn two-factor sign-in on (leaving it is still allowed).
    if (
      cfg.twoFactorExempt !== true &&
      (await services.twoFactor.blocks(projectId, request.session.account.id))
    )
      throw new AppError("TWO_FACTOR_REQUIRED");
    request.membership = { projectId, role };
  });
}

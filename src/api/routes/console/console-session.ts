import type { FastifyReply, FastifyRequest } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import type { Config } from "../../../config/config.schema.js";
import { sessionCsrfToken } from "../../plugins/csrf.plugin.js";
import { sessionCookieName, setCookie } from "../../plugins/session.plugin.js";

/** The caller's IP as the sign-in throttle counts it (TRUSTED_PROXY aware). */
export function clientIpOf(services: ConsoleServices) {
  return (request: FastifyRequest): string =>
    services.clientIp(request.raw.socket?.remoteAddress, request.headers["x-forwarded-for"]) ?? "unknown";
}

/** Sets a new session's cookie; returns its CSRF token (the cookie's token is hashed into the session id). */
export function sessionStarter(services: ConsoleServices, config: Config) {
  return (reply: FastifyReply, token: string): string => {
    setCookie(reply, config, sessionCookieName(config), token, config.sessionTtlHours * 3600);
    return sessionCsrfToken(services.secret, services.accounts.sessionIdOf(token));
  };
}

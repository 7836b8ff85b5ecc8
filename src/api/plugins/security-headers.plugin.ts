import fastifyHelmet, { type FastifyHelmetOptions } from "@fastify/helmet";
import type { FastifyInstance, FastifyReply } from "fastify";
import helmet, { type HelmetOptions } from "helmet";

/**
 * The browser-facing security headers of every answer (helmet), for a JSON API today and the
 * console's single-page app later:
 * - `Content-Security-Policy`: resources from our own origin only (`'self'`), no plugins, no
 *   inline script or style, no framing (`frame-ancestors 'none'`), forms post only to us. A JSON
 *   answer opened as a page can run nothing.
 * - `X-Frame-Options: DENY` for browsers without frame-ancestors; `X-Content-Type-Options:
 *   nosniff`; `Referrer-Policy: no-referrer` (console URLs carry one-time tokens).
 * - `Strict-Transport-Security` only when the public URL is https: on plain HTTP it is ignored at
 *   best, and a proxy in front usually owns it.
 * - helmet's other defaults: Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy
 *   `same-origin` (CORS fetches of the v1 API are not affected: CORP applies to no-cors loads).
 *
 * Registered on the root before every other hook, so that errors raised by later onRequest hooks
 * (authentication, shutdown) and the 404/405 handler carry the headers too.
 */
export async function installSecurityHeaders(app: FastifyInstance, opts: { https: boolean }): Promise<void> {
  await app.register(fastifyHelmet, { global: true, ...helmetOptions(opts.https) });
}

function helmetOptions(https: boolean): FastifyHelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'self'"],
        "base-uri": ["'self'"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
      },
    },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
  };
}

/**
 * The same headers as a fixed list, for answers given before any hook runs (Fastify's
 * `frameworkErrors`: a URL that does not parse). The policy has no per-request part (no nonces).
 */
export function securityHeaderList(https: boolean): Array<[string, string]> {
  const headers: Array<[string, string]> = [];
  const res = {
    setHeader: (name: string, value: string) => headers.push([name.toLowerCase(), String(value)]),
    removeHeader: () => {},
  };
  // The same options object; @fastify/helmet types it through helmet's CommonJS declarations.
  helmet(helmetOptions(https) as HelmetOptions)({} as never, res as never, () => {});
  return headers;
}

/** Puts `headers` (see securityHeaderList) on a reply that does not pass through the hooks. */
export function setHeaders(reply: FastifyReply, headers: ReadonlyArray<[string, string]>): void {
  for (const [name, value] of headers) reply.header(name, value);
}

/**
 * `Cache-Control: no-store` on every answer under `prefix` that has none (console answers are per
 * user): set on the root, so answers that never reach the prefix's own scope (no such route, a
 * URL that does not parse) get it as well.
 */
export function noStoreUnder(app: FastifyInstance, prefix: string): void {
  app.addHook("onSend", async (request, reply, payload) => {
    const url = request.url;
    if (
      (url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`)) &&
      !reply.hasHeader("cache-control")
    )
      reply.header("cache-control", "no-store");
    return payload;
  });
}

import type { FastifyInstance, FastifyReply } from "fastify";
import helmet, { type HelmetOptions } from "helmet";

/**
 * The browser-facing security headers of every answer (computed once by helmet), for a JSON API today and the
 * console's single-page app later:
 * - `Content-Security-Policy`: resources from our own origin only (`'self'`), no plugins, no
 *   inline script or style, no framing (`frame-ancestors 'none'`), forms post only to us. A JSON
 *   answer opened as a page can run nothing.
 * - `X-Frame-Options: DENY` for browsers without frame-ancestors; `X-Content-Type-Options:
 *   nosniff`; `Referrer-Policy: no-referrer` (console URLs carry one-time tokens).
 * - `Strict-Transport-Security` only when the public URL is https: on plain HTTP it is ignored at
 *   best, and a proxy in front usually owns it.
 * - helmet's Cross-Origin-Opener-Policy and Cross-Origin-Resource-Policy `same-origin` (CORS
 *   fetches of the v1 API are not affected: CORP applies to no-cors loads). Its headers for old
 *   browsers (X-XSS-Protection, X-Download-Options, …) are left out.
 *
 * Registered on the root before every other hook, so that errors raised by later onRequest hooks
 * (authentication, shutdown) and the 404/405 handler carry the headers too.
 */
export async function installSecurityHeaders(app: FastifyInstance, opts: { https: boolean }): Promise<void> {
  // helmet computes the headers once; set on the raw response as helmet itself does, so that they
  // survive Fastify's error path. (@fastify/helmet rebuilds helmet's middleware, CSP parsing
  // included, on every request, with two hooks: about a tenth of a resolve's CPU.)
  const headers = securityHeaderList(opts.https);
  app.addHook("onRequest", (_request, reply, done) => {
    for (const [name, value] of headers) reply.raw.setHeader(name, value);
    done();
  });
}

function helmetOptions(https: boolean): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        // Fetch directives left out (script, style, connect, font) fall back to default-src.
        "default-src": ["'self'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
      },
    },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
    // helmet's defaults for old browsers and plugins that no client of a JSON API (nor a modern
    // browser) needs: each would be bytes on every answer for nothing.
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
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
  helmet(helmetOptions(https))({} as never, res as never, () => {});
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
  // A callback, not an async hook: it runs on every answer of the process (the v1 API's too), and
  // an async onSend costs a promise and a microtask turn each.
  app.addHook("onSend", (request, reply, payload, done) => {
    const url = request.url;
    if (
      url.startsWith(prefix) &&
      (url.length === prefix.length || url[prefix.length] === "/" || url[prefix.length] === "?") &&
      !reply.hasHeader("cache-control")
    )
      reply.header("cache-control", "no-store");
    done(null, payload);
  });
}

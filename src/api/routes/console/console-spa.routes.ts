import { existsSync } from "node:fs";
import { readFile, realpath } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Config } from "../../../config/config.schema.js";
import { consolePages } from "./console-pages.routes.js";

/** Content Security Policy of the console's HTML answers: no inline script, nothing from elsewhere. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join("; ");

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".map": "application/json",
};

const NOT_BUILT =
  "omniname: the web console is not built. Run `npm run build` (it writes web/dist), then reload.\n";

/** PACKAGE_ROOT/web/dist (written by `npm run build`). */
export function defaultConsoleDistDir(): string {
  return fileURLToPath(new URL("../../../../web/dist", import.meta.url));
}

/**
 * The web console under /console/. One decision, taken when the app starts:
 * - `distDir/index.html` exists (the SPA built by `npm run build`, normally web/dist): hashed files
 *   under /console/assets/ for a year (immutable), index.html with no-cache for every other path
 *   under /console/ except /console/api (history-API fallback, so the mail links
 *   /console/register?token=…, /console/verify-email?token=…, /console/reset-password?token=… and
 *   /console/projects/ID open the app, which makes the API call);
 * - it does not: the mail links (and /console) open the plain-text pages of console-pages.routes.ts
 *   with the console API steps and the link's token filled in; any other path under /console/ gets
 *   a short page saying to run `npm run build` (never a 500).
 * A build made while the server runs is served after a restart.
 */
export async function consoleSpa(
  scope: FastifyInstance,
  opts: { distDir: string; config: Pick<Config, "publicUrl"> },
): Promise<void> {
  const notBuilt = (reply: FastifyReply) =>
    reply.header("cache-control", "no-store").type("text/plain; charset=utf-8").send(NOT_BUILT);
  if (!existsSync(path.join(opts.distDir, "index.html"))) {
    await consolePages(scope, { config: opts.config });
    scope.get("/console/*", async (request, reply) =>
      isApiPath(request.params) ? reply.callNotFound() : notBuilt(reply),
    );
    return;
  }

  const assetsDir = path.join(opts.distDir, "assets");
  const html = (reply: FastifyReply) =>
    reply.header("content-security-policy", CONSOLE_CSP).header("x-content-type-options", "nosniff");

  const index = async (reply: FastifyReply) => {
    try {
      const body = await readFile(path.join(opts.distDir, "index.html"));
      return html(reply).header("cache-control", "no-cache").type("text/html; charset=utf-8").send(body);
    } catch {
      return notBuilt(reply); // removed after the start
    }
  };

  scope.get("/console/assets/*", async (request, reply) => {
    const name = (request.params as { "*": string })["*"];
    const notFound = () => reply.code(404).type("text/plain; charset=utf-8").send("not found\n");
    // Only plain hashed file names: no separators, no dot segments, nothing encoded left over.
    if (!/^[A-Za-z0-9_.-]{1,200}$/.test(name) || name.startsWith(".")) return notFound();
    try {
      const file = await realpath(path.join(assetsDir, name));
      if (path.dirname(file) !== (await realpath(assetsDir))) return notFound();
      const body = await readFile(file);
      return reply
        .header("cache-control", "public, max-age=31536000, immutable")
        .header("x-content-type-options", "nosniff")
        .type(TYPES[path.extname(name)] ?? "application/octet-stream")
        .send(body);
    } catch {
      return notFound();
    }
  });
  scope.get("/console", async (_request, reply) => index(reply));
  scope.get("/console/*", async (request, reply) =>
    isApiPath(request.params) ? reply.callNotFound() : index(reply),
  );
}

/** /console/api and below belong to the console API (its own 404), never to the pages. */
function isApiPath(params: unknown): boolean {
  const rest = (params as { "*": string })["*"];
  return rest === "api" || rest.startsWith("api/");
}

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONSOLE_CSP, consoleSpa } from "../../src/api/routes/console/console-spa.routes.js";

const config = { publicUrl: "https://omniname.test" };

describe("console SPA serving (fake web/dist in a temp dir)", () => {
  let dir: string;
  let app: FastifyInstance;
  let bare: FastifyInstance;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-spa-"));
    mkdirSync(join(dir, "dist", "assets"), { recursive: true });
    writeFileSync(join(dir, "dist", "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(dir, "dist", "assets", "index-abc123.js"), "console.log(1)");
    writeFileSync(join(dir, "secret.txt"), "outside");
    app = Fastify();
    await app.register(consoleSpa, { distDir: join(dir, "dist"), config });
    bare = Fastify();
    await bare.register(consoleSpa, { distDir: join(dir, "missing"), config });
  });
  afterAll(async () => {
    await app.close();
    await bare.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves index.html with no-cache and the CSP at /console/ and any client route", async () => {
    for (const url of ["/console", "/console/", "/console/projects/3/keys", "/console/register?token=x"]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.headers["cache-control"]).toBe("no-cache");
      expect(res.headers["content-security-policy"]).toBe(CONSOLE_CSP);
      expect(res.body).toContain("<title>console</title>");
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain("unsafe-inline");
  });

  it("serves hashed assets as immutable; unknown asset is 404", async () => {
    const res = await app.inject({ url: "/console/assets/index-abc123.js" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(res.headers["content-type"]).toMatch(/javascript/);
    expect((await app.inject({ url: "/console/assets/nope-1.js" })).statusCode).toBe(404);
  });

  it("never serves a file outside dist (traversal, encoded variants)", async () => {
    for (const url of [
      "/console/assets/../../secret.txt",
      "/console/assets/..%2f..%2fsecret.txt",
      "/console/assets/%2e%2e/%2e%2e/secret.txt",
      "/console/assets/..%5c..%5csecret.txt",
      "/console/assets/%252e%252e%252fsecret.txt",
    ]) {
      const res = await app.inject({ url });
      expect(res.body, url).not.toContain("outside");
      expect(res.statusCode, url).toBe(404);
    }
  });

  it("does not swallow /console/api paths", async () => {
    expect((await app.inject({ url: "/console/api/nope" })).statusCode).toBe(404);
  });

  it("answers a plain page (never 500) when the console is not built", async () => {
    const res = await bare.inject({ url: "/console/" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toContain("npm run build");
    const other = await bare.inject({ url: "/console/projects/3/keys" });
    expect(other.statusCode).toBe(200);
    expect(other.body).toBe(
      "omniname: the web console is not built. Run `npm run build` (it writes web/dist), then reload.\n",
    );
    expect((await bare.inject({ url: "/console/assets/index-abc123.js" })).body).not.toContain("console.log");
    expect((await bare.inject({ url: "/console/api/nope" })).statusCode).toBe(404);
  });

  it("without a build, the mail-link paths answer the plain-text pages with the token filled in", async () => {
    const token = "a".repeat(43);
    const res = await bare.inject({ url: `/console/verify-email?token=${token}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(res.body).toContain(`{"token":"${token}"}`);
    expect(res.body).toContain("https://omniname.test/console/api/auth/verify-email");
  });
});

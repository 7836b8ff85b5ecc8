import Fastify, { type RouteOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { type ConsoleAccess, consoleRouter } from "./console-route.js";
import { CONSOLE_BODY_LIMIT, ProjectParams } from "./console.schemas.js";

/** What one entry declares on Fastify (collected by onRoute, no request made). */
async function declared(url: string, access: ConsoleAccess, bodyLimit?: number) {
  const app = Fastify();
  const seen: RouteOptions[] = [];
  app.addHook("onRoute", (r) => {
    if (r.method !== "HEAD") seen.push(r);
  });
  consoleRouter(app).post(url, {
    summary: "a route",
    access,
    params: ProjectParams,
    ...(bodyLimit === undefined ? {} : { bodyLimit }),
    handler: async () => null,
  });
  await app.ready();
  await app.close();
  const [r] = seen;
  const schema = r.schema as { summary?: string; tags?: string[]; security?: unknown; params?: unknown };
  return { config: r.config, bodyLimit: r.bodyLimit, schema };
}

describe("consoleRouter", () => {
  it.each([
    ["public", "/auth/x", { auth: "public" }, []],
    ["session", "/account/x", {}, undefined],
    ["keys.read", "/projects/:projectId/x", { permission: "keys.read" }, undefined],
  ] as const)("declares access %s as the session plugin reads it", async (access, url, config, security) => {
    const r = await declared(url, access);
    expect(r.config).toMatchObject(config);
    expect((r.config as { auth?: string }).auth).toBe(access === "public" ? "public" : undefined);
    expect((r.config as { permission?: string }).permission).toBe(
      access === "public" || access === "session" ? undefined : access,
    );
    expect(r.schema.security).toEqual(security);
    expect(r.schema).toMatchObject({ summary: "a route", tags: ["console"], params: ProjectParams });
  });

  it("limits every body to CONSOLE_BODY_LIMIT unless the entry names a larger one", async () => {
    expect((await declared("/account/x", "session")).bodyLimit).toBe(CONSOLE_BODY_LIMIT);
    expect((await declared("/account/x", "session", 2 * 1024 * 1024)).bodyLimit).toBe(2 * 1024 * 1024);
  });

  it("refuses, when the app is built, a permission on a route without :projectId", () => {
    expect(() =>
      consoleRouter(Fastify()).get("/account/x", {
        summary: "x",
        access: "keys.read",
        handler: async () => null,
      }),
    ).toThrow(/GET \/account\/x: a permission needs a :projectId/);
  });
});

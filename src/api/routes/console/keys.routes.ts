import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { consoleRouter, projectIdOf as pid } from "./console-route.js";
import { KeyBody, KeyParams, KeyPatchBody, ok, ProjectParams, RotateBody } from "./console.schemas.js";

/** API keys of a project: list, create, change limits, rotate, revoke (docs/console-api.md). */
export function keysRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const { projects } = services;
  const route = consoleRouter(scope);

  route.get("/projects/:projectId/keys", {
    summary: "Every API key: prefix, name, limits, expiry, last use, requests this month; never the secret",
    access: "keys.read",
    params: ProjectParams,
    handler: async (request) => ok(await projects.listKeys(pid(request))),
  });
  route.post("/projects/:projectId/keys", {
    summary: "Create an API key, optionally scoped and expiring; the secret is in this answer only",
    access: "keys.write",
    params: ProjectParams,
    body: KeyBody,
    handler: async (request, reply) => {
      const created = await projects.createKey(pid(request), request.body);
      // The one answer that carries a secret: no cache may keep it.
      reply.header("cache-control", "no-store");
      return reply.code(201).send(ok(created));
    },
  });
  route.patch("/projects/:projectId/keys/:keyId", {
    summary: "Change a key's name, endpoints, networks, providers or expiry (every instance within 1 s)",
    access: "keys.write",
    params: KeyParams,
    body: KeyPatchBody,
    handler: async (request) =>
      ok(await projects.updateKey(pid(request), Number(request.params.keyId), request.body)),
  });
  route.post("/projects/:projectId/keys/:keyId/rotate", {
    summary: "Rotate a key: a new key with the same limits; the old one works until overlapUntil (≤ 30 days)",
    access: "keys.write",
    params: KeyParams,
    body: RotateBody,
    handler: async (request, reply) => {
      const rotated = await projects.rotateKey(pid(request), Number(request.params.keyId), request.body);
      reply.header("cache-control", "no-store");
      return reply.code(201).send(ok(rotated));
    },
  });
  route.delete("/projects/:projectId/keys/:keyId", {
    summary: "Revoke an API key; refused from the next request",
    access: "keys.write",
    params: KeyParams,
    handler: async (request) => {
      await projects.revokeKey(pid(request), Number(request.params.keyId));
      return ok({ revoked: true });
    },
  });
}

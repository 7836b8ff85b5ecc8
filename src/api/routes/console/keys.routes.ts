import type { Static } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import {
  CONSOLE_BODY_LIMIT,
  doc,
  KeyBody,
  KeyParams,
  KeyPatchBody,
  ok,
  ProjectParams,
  RotateBody,
} from "./console.schemas.js";

type P = { Params: Static<typeof ProjectParams> };
type K = { Params: Static<typeof KeyParams> };

/** API keys of a project: list, create, change limits, rotate, revoke (docs/console-api.md). */
export function keysRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const { projects } = services;
  const pid = (request: FastifyRequest) => request.membership!.projectId;

  scope.get<P>(
    "/projects/:projectId/keys",
    {
      config: { permission: "keys.read" },
      schema: {
        ...doc(
          "Every API key: prefix, name, limits, expiry, last use, requests this month; never the secret",
        ),
        params: ProjectParams,
      },
    },
    async (request) => ok(await projects.listKeys(pid(request))),
  );

  scope.post<P & { Body: Static<typeof KeyBody> }>(
    "/projects/:projectId/keys",
    {
      config: { permission: "keys.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Create an API key, optionally scoped and expiring; the secret is in this answer only"),
        params: ProjectParams,
        body: KeyBody,
      },
    },
    async (request, reply) => {
      const created = await projects.createKey(pid(request), request.body);
      // The one answer that carries a secret: no cache may keep it.
      reply.header("cache-control", "no-store");
      return reply.code(201).send(ok(created));
    },
  );

  scope.patch<K & { Body: Static<typeof KeyPatchBody> }>(
    "/projects/:projectId/keys/:keyId",
    {
      config: { permission: "keys.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc("Change a key's name, endpoints, networks, providers or expiry (every instance within 1 s)"),
        params: KeyParams,
        body: KeyPatchBody,
      },
    },
    async (request) => ok(await projects.updateKey(pid(request), Number(request.params.keyId), request.body)),
  );

  scope.post<K & { Body: Static<typeof RotateBody> }>(
    "/projects/:projectId/keys/:keyId/rotate",
    {
      config: { permission: "keys.write" },
      bodyLimit: CONSOLE_BODY_LIMIT,
      schema: {
        ...doc(
          "Rotate a key: a new key with the same limits; the old one works until overlapUntil (≤ 30 days)",
        ),
        params: KeyParams,
        body: RotateBody,
      },
    },
    async (request, reply) => {
      const rotated = await projects.rotateKey(pid(request), Number(request.params.keyId), request.body);
      reply.header("cache-control", "no-store");
      return reply.code(201).send(ok(rotated));
    },
  );

  scope.delete<K>(
    "/projects/:projectId/keys/:keyId",
    {
      config: { permission: "keys.write" },
      schema: { ...doc("Revoke an API key; refused from the next request"), params: KeyParams },
    },
    async (request) => {
      await projects.revokeKey(pid(request), Number(request.params.keyId));
      return ok({ revoked: true });
    },
  );
}

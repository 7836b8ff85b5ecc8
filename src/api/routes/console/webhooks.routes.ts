import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { WEBHOOK_URL_MAX } from "../../../accounts/webhook-address.js";
import { CHANGE_TYPES } from "../../../domain/change-events.js";
import { MAX_FILTER_VALUES } from "../../../workers/change-filter.js";
import type { WebhookService } from "../../webhooks/webhook-service.js";
import { consoleRouter, projectIdOf as pid } from "./console-route.js";
import { ok, ProjectParams } from "./console.schemas.js";

const Id = Type.String({ pattern: "^[1-9][0-9]{0,14}$" });
const WebhookParams = Type.Object({ projectId: Id, webhookId: Id });
const Values = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: MAX_FILTER_VALUES });
const WebhookBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: WEBHOOK_URL_MAX })),
    description: Type.Optional(Type.String({ maxLength: 200 })),
    eventTypes: Type.Optional(
      Type.Array(Type.String({ maxLength: 64, description: CHANGE_TYPES.join(", ") }), { maxItems: 16 }),
    ),
    // A record, not an object of known keys: an unknown filter is refused (webhook-service.ts),
    // never dropped, since a dropped filter would widen what the receiver gets.
    filters: Type.Optional(Type.Record(Type.String({ maxLength: 32 }), Values, { maxProperties: 8 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const DeliveriesQuery = Type.Object(
  { limit: Type.Optional(Type.String({ pattern: "^(200|1[0-9]{2}|[1-9][0-9]?)$" })) },
  { additionalProperties: false },
);
/** 1,000 filter values of up to 256 characters. */
const WEBHOOK_BODY_LIMIT = 512 * 1024;

/** A project's webhooks (docs/console-api.md, "Webhooks"): owners and admins. */
export function webhookRoutes(scope: FastifyInstance, webhooks: WebhookService): void {
  const wid = (request: FastifyRequest<{ Params: Static<typeof WebhookParams> }>) =>
    Number(request.params.webhookId);
  const route = consoleRouter(scope);

  route.get("/projects/:projectId/webhooks", {
    summary: "The project's webhooks (never their secrets)",
    access: "webhooks.read",
    params: ProjectParams,
    handler: async (request) => ok(await webhooks.list(pid(request))),
  });
  route.get("/projects/:projectId/webhooks/address-policy", {
    summary: "Which webhook URLs this server accepts: whether http to a loopback address is allowed",
    access: "webhooks.read",
    params: ProjectParams,
    handler: async () => ok(webhooks.addressPolicy()),
  });
  route.post("/projects/:projectId/webhooks", {
    summary: "Create a webhook; its signing secret is in this answer only",
    access: "webhooks.write",
    params: ProjectParams,
    body: WebhookBody,
    bodyLimit: WEBHOOK_BODY_LIMIT,
    handler: async (request, reply) => {
      const created = await webhooks.create(pid(request), request.body);
      reply.header("cache-control", "no-store");
      return reply.code(201).send(ok(created));
    },
  });
  route.patch("/projects/:projectId/webhooks/:webhookId", {
    summary: "Change a webhook's URL, filters, event types or state",
    access: "webhooks.write",
    params: WebhookParams,
    body: WebhookBody,
    bodyLimit: WEBHOOK_BODY_LIMIT,
    handler: async (request) => ok(await webhooks.update(pid(request), wid(request), request.body)),
  });
  route.delete("/projects/:projectId/webhooks/:webhookId", {
    summary: "Delete a webhook, its queue and its delivery log",
    access: "webhooks.write",
    params: WebhookParams,
    handler: async (request) => {
      await webhooks.remove(pid(request), wid(request));
      return ok({ deleted: true });
    },
  });
  route.post("/projects/:projectId/webhooks/:webhookId/rotate-secret", {
    summary: "A new signing secret, in this answer only",
    access: "webhooks.write",
    params: WebhookParams,
    handler: async (request, reply) => {
      reply.header("cache-control", "no-store");
      return ok(await webhooks.rotateSecret(pid(request), wid(request)));
    },
  });
  route.post("/projects/:projectId/webhooks/:webhookId/test", {
    summary: "Send a signed webhook.test event now and answer the receiver's reply",
    access: "webhooks.write",
    params: WebhookParams,
    handler: async (request) => ok(await webhooks.sendTest(pid(request), wid(request))),
  });
  route.get("/projects/:projectId/webhooks/:webhookId/deliveries", {
    summary: "The delivery log, newest first: attempt, status, latency, start of the response",
    access: "webhooks.read",
    params: WebhookParams,
    querystring: DeliveriesQuery,
    handler: async (request) =>
      ok(await webhooks.deliveries(pid(request), wid(request), Number(request.query.limit ?? 50))),
  });
}

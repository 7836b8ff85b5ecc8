import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { WEBHOOK_URL_MAX } from "../../../accounts/webhook-address.js";
import { CHANGE_TYPES } from "../../../domain/change-events.js";
import { MAX_FILTER_VALUES } from "../../../workers/change-filter.js";
import type { WebhookService } from "../../webhooks/webhook-service.js";
import { doc, ok, ProjectParams } from "./console.schemas.js";

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

type P = { Params: Static<typeof ProjectParams> };
type W = { Params: Static<typeof WebhookParams> };
type B = { Body: Static<typeof WebhookBody> };

/** A project's webhooks (docs/console-api.md, "Webhooks"): owners and admins. */
export function webhookRoutes(scope: FastifyInstance, webhooks: WebhookService): void {
  const pid = (request: FastifyRequest) => request.membership!.projectId;
  const wid = (request: FastifyRequest<W>) => Number(request.params.webhookId);

  scope.get<P>(
    "/projects/:projectId/webhooks",
    {
      config: { permission: "webhooks.read" },
      schema: { ...doc("The project's webhooks (never their secrets)"), params: ProjectParams },
    },
    async (request) => ok(await webhooks.list(pid(request))),
  );

  scope.get<P>(
    "/projects/:projectId/webhooks/address-policy",
    {
      config: { permission: "webhooks.read" },
      schema: {
        ...doc("Which webhook URLs this server accepts: whether http to a loopback address is allowed"),
        params: ProjectParams,
      },
    },
    async () => ok(webhooks.addressPolicy()),
  );

  scope.post<P & B>(
    "/projects/:projectId/webhooks",
    {
      config: { permission: "webhooks.write" },
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        ...doc("Create a webhook; its signing secret is in this answer only"),
        params: ProjectParams,
        body: WebhookBody,
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(pid(request), request.body);
      reply.header("cache-control", "no-store");
      return reply.code(201).send(ok(created));
    },
  );

  scope.patch<W & B>(
    "/projects/:projectId/webhooks/:webhookId",
    {
      config: { permission: "webhooks.write" },
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        ...doc("Change a webhook's URL, filters, event types or state"),
        params: WebhookParams,
        body: WebhookBody,
      },
    },
    async (request) => ok(await webhooks.update(pid(request), wid(request), request.body)),
  );

  scope.delete<W>(
    "/projects/:projectId/webhooks/:webhookId",
    {
      config: { permission: "webhooks.write" },
      schema: { ...doc("Delete a webhook, its queue and its delivery log"), params: WebhookParams },
    },
    async (request) => {
      await webhooks.remove(pid(request), wid(request));
      return ok({ deleted: true });
    },
  );

  scope.post<W>(
    "/projects/:projectId/webhooks/:webhookId/rotate-secret",
    {
      config: { permission: "webhooks.write" },
      schema: { ...doc("A new signing secret, in this answer only"), params: WebhookParams },
    },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      return ok(await webhooks.rotateSecret(pid(request), wid(request)));
    },
  );

  scope.post<W>(
    "/projects/:projectId/webhooks/:webhookId/test",
    {
      config: { permission: "webhooks.write" },
      schema: {
        ...doc("Send a signed webhook.test event now and answer the receiver's reply"),
        params: WebhookParams,
      },
    },
    async (request) => ok(await webhooks.sendTest(pid(request), wid(request))),
  );

  scope.get<W & { Querystring: Static<typeof DeliveriesQuery> }>(
    "/projects/:projectId/webhooks/:webhookId/deliveries",
    {
      config: { permission: "webhooks.read" },
      schema: {
        ...doc("The delivery log, newest first: attempt, status, latency, start of the response"),
        params: WebhookParams,
        querystring: DeliveriesQuery,
      },
    },
    async (request) =>
      ok(await webhooks.deliveries(pid(request), wid(request), Number(request.query.limit ?? 50))),
  );
}

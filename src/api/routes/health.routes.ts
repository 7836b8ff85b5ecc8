import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { haltAdvice } from "../../crawler/sync-helpers.js";
import { AppError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import { errorEnvelope } from "../plugins/errors.plugin.js";
import { ErrorEnvelope, ok } from "./v1/v1.schemas.js";

const Status = ok(Type.Object({ status: Type.String() }));
const Readiness = ok(
  Type.Object({
    status: Type.String(),
    channel: Type.Optional(
      Type.Union([Type.Literal("up"), Type.Literal("down")], {
        description:
          "The change channel between processes (PostgreSQL LISTEN/NOTIFY), when the store has one. While down, caches fall back to a 1 s TTL (bounded staleness); the process stays ready.",
      }),
    ),
  }),
);

/**
 * GET /healthz (the process is alive) and GET /readyz (the store answers and no crawler source is
 * halted; with a change channel, `channel` says whether it is up); no authentication. A halted source is read from its checkpoint, so an API instance
 * sees the halt of a crawler running elsewhere too.
 */
export function healthRoutes(app: FastifyInstance, store: Store): void {
  app.get(
    "/healthz",
    {
      schema: {
        operationId: "healthz",
        summary: "Liveness: the process answers.",
        security: [],
        response: { 200: Status },
      },
    },
    async () => ({ result: true, data: { status: "alive" } }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        operationId: "readyz",
        summary:
          "Readiness: the data store answers (503 STORE_UNAVAILABLE when it does not) and no crawler source is halted (503 SOURCE_HALTED, naming the source, the reason and what to do).",
        security: [],
        response: { 200: Readiness, 503: ErrorEnvelope },
      },
    },
    async (_req, reply) => {
      const up = await store.ping().catch(() => false);
      if (!up) throw new AppError("STORE_UNAVAILABLE");
      const halted = (await store.listCheckpoints()).filter((c) => c.state === "halted");
      if (halted.length === 0) {
        const channel = store.changes === undefined ? undefined : store.changes.up ? "up" : "down";
        return {
          result: true,
          data: channel === undefined ? { status: "ready" } : { status: "ready", channel },
        };
      }
      // Not the error handler: its 5xx answers carry the registry's text only, and this one must
      // say which source, why and what to do (none of it secret: /status shows the same).
      const message = halted
        .map(
          (c) =>
            `source ${c.sourceId} is halted at block ${c.blockNumber}: ${c.error ?? "no reason recorded"}; to resume: ${haltAdvice(c.sourceId, c.blockNumber, c.error)}`,
        )
        .join(" | ");
      return reply.code(503).send(errorEnvelope("SOURCE_HALTED", `not ready: ${message}`));
    },
  );
}

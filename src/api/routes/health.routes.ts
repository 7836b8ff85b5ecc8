import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { AppError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import { ErrorEnvelope, ok } from "./v1/v1.schemas.js";

const Status = ok(Type.Object({ status: Type.String() }));

/** GET /healthz (the process is alive) and GET /readyz (the store answers); no authentication. */
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
        summary: "Readiness: the data store answers (503 STORE_UNAVAILABLE when it does not).",
        security: [],
        response: { 200: Status, 503: ErrorEnvelope },
      },
    },
    async () => {
      const up = await store.ping().catch(() => false);
      if (!up) throw new AppError("STORE_UNAVAILABLE");
      return { result: true, data: { status: "ready" } };
    },
  );
}

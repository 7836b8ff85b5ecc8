import { type Static, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { haltAdvice } from "../../crawler/sync-helpers.js";
import { AppError } from "../../domain/errors.js";
import type { Store } from "../../store/store.js";
import { errorEnvelope } from "../plugins/errors.plugin.js";
import { ErrorEnvelope, ok } from "./v1/v1.schemas.js";

const Status = ok(Type.Object({ status: Type.String() }));
const UpDown = (description: string) =>
  Type.Union([Type.Literal("up"), Type.Literal("down")], { description });
const Nullable = <T extends ReturnType<typeof Type.Number | typeof Type.String>>(t: T) =>
  Type.Union([t, Type.Null()]);

const SourceLag = Type.Object({
  id: Type.String(),
  state: Type.String({ description: "The checkpoint's state: backfill | live | retrying | halted | …" }),
  head: Nullable(Type.Number({ description: "The chain head the source's writer last reported, or null" })),
  indexed: Type.Number({ description: "The last indexed block (the checkpoint)" }),
  lag: Nullable(Type.Number({ description: "head - indexed in blocks (0 when caught up), or null" })),
  secondsBehind: Nullable(
    Type.Number({
      description:
        "0 when caught up; else seconds since the latest time T whose head (as the writer saw it then) is indexed now: the index holds everything the chain had at T. Null when unknown",
    }),
  ),
  holder: Nullable(
    Type.String({ description: "The crawler process writing the source (unexpired lease), or null" }),
  ),
  reportedSecondsAgo: Nullable(
    Type.Number({ description: "Age of the writer's last report of head and sync time, or null" }),
  ),
});

const Readiness = ok(
  Type.Object({
    status: Type.String(),
    store: Type.Literal("up", { description: "The store answered (else 503 STORE_UNAVAILABLE)" }),
    redis: Type.Optional(
      UpDown(
        "With REDIS_URL: Redis answered a PING within 500 ms. While down, limits count in process memory; the process stays ready.",
      ),
    ),
    channel: Type.Optional(
      UpDown(
        "The change channel between processes (PostgreSQL LISTEN/NOTIFY), when the store has one. While down, caches fall back to a 1 s TTL (bounded staleness); the process stays ready.",
      ),
    ),
    sources: Type.Array(SourceLag, {
      description: "Index lag per crawled source, whichever process crawls it",
    }),
  }),
);
type ReadinessData = Static<typeof Readiness>["data"];

export interface HealthOptions {
  /** With REDIS_URL: whether Redis answers now ("up" | "down"); absent without Redis. */
  redisHealth?: () => Promise<"up" | "down">;
  clock?: () => number;
}

/**
 * GET /healthz (the process is alive) and GET /readyz (the store answers and no crawler source is
 * halted; it reports index lag per source, and Redis and the change channel when there are).
 * No authentication. Lag and halts are read from the store (checkpoints and the writers' lease
 * rows), so an API process sees the crawler of another process. Shape: docs/operations.md.
 */
export function healthRoutes(
  app: FastifyInstance,
  store: Pick<Store, "ping" | "changes" | "crawlerLog">,
  opts: HealthOptions = {},
): void {
  const clock = opts.clock ?? Date.now;
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
          "Readiness: the data store answers (503 STORE_UNAVAILABLE when it does not) and no crawler source is halted (503 SOURCE_HALTED, naming the source, the reason and what to do); reports index lag per source, Redis and change-channel health.",
        security: [],
        response: { 200: Readiness, 503: ErrorEnvelope },
      },
    },
    async (_req, reply) => {
      const up = await store.ping().catch(() => false);
      if (!up) throw new AppError("STORE_UNAVAILABLE");
      const [checkpoints, leases, redis] = await Promise.all([
        store.crawlerLog.listCheckpoints(),
        store.crawlerLog.listSourceLeases(),
        opts.redisHealth?.(),
      ]);
      const halted = checkpoints.filter((c) => c.state === "halted");
      if (halted.length === 0) {
        const now = clock();
        const byId = new Map(leases.map((l) => [l.sourceId, l]));
        const sources = checkpoints.map((c) => {
          const l = byId.get(c.sourceId);
          const head = l?.head ?? null;
          const lag = head === null ? null : Math.max(0, head - c.blockNumber);
          const syncedAt = l?.syncedAt ?? null;
          return {
            id: c.sourceId,
            state: c.state,
            head,
            indexed: c.blockNumber,
            lag,
            secondsBehind:
              lag === null ? null : lag === 0 ? 0 : syncedAt === null ? null : seconds(now - syncedAt),
            holder: l && l.expiresAt >= now ? l.holder : null,
            reportedSecondsAgo: l?.reportedAt == null ? null : seconds(now - l.reportedAt),
          };
        });
        const data: ReadinessData = {
          status: "ready",
          store: "up",
          ...(redis === undefined ? {} : { redis }),
          ...(store.changes === undefined ? {} : { channel: store.changes.up ? "up" : "down" }),
          sources,
        };
        return { result: true, data };
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

/** Milliseconds as seconds with one decimal, never negative. */
const seconds = (ms: number) => Math.max(0, Math.round(ms / 100) / 10);

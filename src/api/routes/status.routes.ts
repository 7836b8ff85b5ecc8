import { type Static, Type } from "@sinclair/typebox";
import type { FastifyPluginAsync } from "fastify";
import type { Registry } from "prom-client";
import type { SourceStatus } from "../../crawler/source-progress.js";
import type { LeaseStatus } from "../../crawler/source-lease.js";
import { haltAdvice } from "../../crawler/sync-helpers.js";
import { findProvider } from "../../domain/providers.js";
import type { Store } from "../../store/store.js";
import { ok } from "./v1/v1.schemas.js";

interface StatusRoutesOptions {
  store: Pick<Store, "crawlerLog">;
  /** The crawler of this process, when it runs one; otherwise sources are read from the checkpoints. */
  crawler?: { status(): Array<SourceStatus & { lease?: LeaseStatus }> } | null;
  /** The registry GET /metrics serves (the crawler's metrics are registered on it). */
  registry?: Registry | null;
}

const Nullable = <T extends ReturnType<typeof Type.Number>>(t: T) => Type.Union([t, Type.Null()]);

const SourceSchema = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  network: Type.String(),
  chainId: Type.Number(),
  state: Type.String({
    description: "backfill | live | retrying | halted | stopped | standby (another process writes) | syncing",
  }),
  head: Nullable(Type.Number()),
  checkpoint: Type.Number(),
  checkpointHash: Type.String(),
  lag: Nullable(Type.Number()),
  eventsPerSecond: Nullable(Type.Number()),
  etaSeconds: Nullable(Type.Number()),
  error: Type.Union([Type.String(), Type.Null()]),
  action: Type.Union([Type.String(), Type.Null()], {
    description: "What the operator does about this source (a halted one), or null",
  }),
  updatedAt: Type.String({ description: "ISO 8601 time of the last checkpoint write or status sample" }),
  holder: Type.Union([Type.String(), Type.Null()], {
    description:
      "The crawler process (INSTANCE_ID or hostname:pid) holding the source's writer lease, or null",
  }),
  role: Type.Union([Type.Literal("writer"), Type.Literal("standby"), Type.Null()], {
    description: "This process's role for the source: writer, standby, or null (not crawled here)",
  }),
  inProcess: Type.Boolean({
    description: "Crawled by this process (live head and rates) or read from the store",
  }),
});

const StatusResponse = ok(Type.Object({ sources: Type.Array(SourceSchema) }));

/**
 * GET /status (every source's head, checkpoint, lag and state) and GET /metrics (Prometheus text).
 * Operational endpoints without an API key: they show block numbers and counters, never RPC URLs.
 *
 * @example await app.register(statusRoutes, { store, crawler, registry });
 */
export const statusRoutes: FastifyPluginAsync<StatusRoutesOptions> = async (app, opts) => {
  app.get(
    "/status",
    {
      schema: {
        operationId: "status",
        summary: "Crawler status: every source's head, checkpoint, lag and state.",
        security: [],
        response: { 200: StatusResponse },
      },
    },
    async () => {
      const checkpoints = await opts.store.crawlerLog.listCheckpoints();
      const now = Date.now();
      const holders = new Map(
        (await opts.store.crawlerLog.listSourceLeases())
          .filter((l) => l.expiresAt >= now)
          .map((l) => [l.sourceId, l.holder]),
      );
      const byId = new Map(checkpoints.map((c) => [c.sourceId, c]));
      const live = opts.crawler?.status() ?? [];
      const sources: Array<Static<typeof SourceSchema>> = live.map((s) => {
        const c = byId.get(s.id);
        return {
          id: s.id,
          provider: s.provider,
          network: s.network,
          chainId: s.chainId,
          state: s.state,
          head: s.head,
          checkpoint: s.checkpoint,
          checkpointHash: c?.blockHash ?? "",
          lag: s.lag,
          eventsPerSecond: s.eventsPerSecond,
          etaSeconds: s.etaSeconds,
          error: s.error,
          action: s.state === "halted" ? haltAdvice(s.id, s.checkpoint, s.error) : null,
          updatedAt: new Date(c?.updatedAt ?? s.updatedAt).toISOString(),
          holder: s.lease ? (holders.get(s.id) ?? s.lease.holder) : null,
          role: s.lease ? s.lease.role : "writer",
          inProcess: true,
        };
      });
      const seen = new Set(live.map((s) => s.id));
      for (const c of checkpoints) {
        if (seen.has(c.sourceId)) continue;
        const [protocol = "", network = ""] = c.sourceId.split("-");
        sources.push({
          id: c.sourceId,
          provider: findProvider(protocol) ?? protocol.toUpperCase(),
          network: network.toUpperCase(),
          chainId: c.chainId,
          state: c.state,
          head: null,
          checkpoint: c.blockNumber,
          checkpointHash: c.blockHash,
          lag: null,
          eventsPerSecond: null,
          etaSeconds: null,
          error: c.error,
          action: c.state === "halted" ? haltAdvice(c.sourceId, c.blockNumber, c.error) : null,
          updatedAt: new Date(c.updatedAt).toISOString(),
          holder: holders.get(c.sourceId) ?? null,
          role: null,
          inProcess: false,
        });
      }
      return { result: true, data: { sources } };
    },
  );

  app.get(
    "/metrics",
    {
      schema: {
        operationId: "metrics",
        summary: "Prometheus metrics (text exposition format).",
        security: [],
      },
    },
    async (_req, reply) => {
      const registry = opts.registry;
      if (!registry) return reply.type("text/plain; version=0.0.4").send("");
      return reply.type(registry.contentType).send(await registry.metrics());
    },
  );
};

import type { ServerResponse } from "node:http";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ApiKeyVerifier } from "../../accounts/api-keys.js";
import { AppError, type ErrorCode } from "../../domain/errors.js";
import { keyRefusal } from "../plugins/api-key.plugin.js";
import { compiledRulesOf } from "../../scoring/project-rules.js";
import type { ChangeLog } from "../../store/change-log.port.js";
import { ERROR_RESPONSES } from "../routes/v1/v1.schemas.js";
import { type ChangeFilter, matchesChange, parseChangeFilter } from "../../workers/change-filter.js";
import type { ChangeHub } from "./change-hub.js";

export interface ChangesRoutesOptions {
  hub: ChangeHub;
  store: Pick<ChangeLog, "changeLogBounds">;
  verifier: Pick<ApiKeyVerifier, "verify">;
  heartbeatMs: number;
  maxClients: number;
  stallMs: number;
  /** Wall clock of key expiries (AppContext.clock); default Date.now. */
  clock?: () => number;
}

/** Events a client is handed at once (from the ring or one store page): its memory bound. */
const PAGE = 100;
/** A cursor: the id of the last event received (0: from the start of the log). */
const CURSOR = /^\d{1,15}$/;
/** A client paused by the socket is not sent heartbeats beyond this much unread output. */
const HEARTBEAT_BACKLOG_BYTES = 64 * 1024;
/** After a refusal sent as an event, a browser's EventSource waits this long before it tries again. */
const RETRY_AFTER_ERROR_MS = 60_000;

const listParam = (what: string) =>
  Type.Optional(Type.String({ description: `Comma-separated ${what}; absent: all.` }));

const ChangesQuery = Type.Object({
  after: Type.Optional(
    Type.String({
      description:
        "Resume after this event id (the cursor); the Last-Event-ID header does the same. Absent: from now on.",
    }),
  ),
  domains: listParam("domain names"),
  tlds: listParam("top-level domains"),
  addresses: listParam(
    "addresses: an event passes when the owner (before or after) or a record value is one of them",
  ),
  networks: listParam("networks"),
  providers: listParam("providers"),
  types: listParam(
    "event types: domain.created, domain.updated, domain.removed, winner.changed, change.retracted",
  ),
});

/** Writes `text`; when the socket is full, waits for it to drain at most `stallMs`, then drops the client. */
function write(raw: ServerResponse, text: string, stallMs: number): Promise<boolean> {
  if (raw.destroyed || raw.writableEnded) return Promise.resolve(false);
  if (raw.write(text)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      raw.off("drain", onDrain);
      raw.off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => {
      done(false);
      raw.destroy();
    }, stallMs);
    raw.once("drain", onDrain);
    raw.once("close", onClose);
  });
}

function errorEvent(code: ErrorCode, message: string): string {
  return `event: feed.error\nretry: ${RETRY_AFTER_ERROR_MS}\ndata: ${JSON.stringify({ code, message })}\n\n`;
}

/**
 * GET /changes: the change feed as Server-Sent Events (docs/api.md, "Change feed"). Registered in
 * the v1 scope, so the api-key hook, the key's allowlists, rate limits and usage apply to the
 * connection as to one request.
 */
export function changesRoutes(scope: FastifyInstance, opts: ChangesRoutesOptions): void {
  const open = new Set<AbortController>();
  scope.addHook("preClose", async () => {
    for (const c of open) c.abort();
  });

  scope.get<{ Querystring: Record<string, string | undefined> }>(
    "/changes",
    {
      sse: { kind: "only", heartbeat: false },
      schema: {
        operationId: "changes",
        summary: "The change feed: every change of the map as Server-Sent Events.",
        description:
          "Events domain.created, domain.updated, domain.removed, winner.changed, change.retracted, each with a monotonic id (the cursor). Resume with Last-Event-ID or ?after=. Heartbeat comments every 15 s. A cursor that expired or lies in the future gets an event feed.error (CURSOR_EXPIRED, CURSOR_FROM_FUTURE), then the stream ends.",
        querystring: ChangesQuery,
        response: { ...ERROR_RESPONSES },
      },
    } as never,
    async (
      request: FastifyRequest<{ Querystring: Record<string, string | undefined> }>,
      reply: FastifyReply,
    ) => {
      const filter = parseChangeFilter(request.query);
      const raw = request.query.after ?? request.headers["last-event-id"];
      if (raw !== undefined && (typeof raw !== "string" || !CURSOR.test(raw.trim())))
        throw new AppError(
          "INVALID_PARAMETER",
          'The cursor ("after" or Last-Event-ID) must be an event id: a whole number of at most 15 digits.',
        );
      if (open.size >= opts.maxClients)
        throw new AppError(
          "FEED_BUSY",
          `This server holds ${opts.maxClients} change feed streams; retry later.`,
        );
      const bounds = await opts.store.changeLogBounds();
      const newest = Math.max(bounds.newest, opts.hub.newest);
      const cursor = raw === undefined ? newest : Number(raw.trim());

      const sse = (reply as unknown as { sse: { keepAlive(): void; sendHeaders(): void } }).sse;
      sse.keepAlive();
      sse.sendHeaders();
      const out = reply.raw;
      if (cursor < bounds.prunedThrough || cursor > newest) {
        const expired = cursor < bounds.prunedThrough;
        out.end(
          expired
            ? errorEvent(
                "CURSOR_EXPIRED",
                `Event ${cursor} is older than the retention window (events up to ${bounds.prunedThrough} were pruned): start again without a cursor.`,
              )
            : errorEvent(
                "CURSOR_FROM_FUTURE",
                `Event ${cursor} does not exist yet: the newest is ${newest}.`,
              ),
        );
        return reply;
      }
      const abort = new AbortController();
      open.add(abort);
      opts.hub.clients.inc();
      out.once("close", () => abort.abort());
      const client: Client = {
        out,
        cursor,
        filter,
        rules: compiledRulesOf(request.project?.settings ?? {}),
        projectId: request.project?.id ?? 0,
        signal: abort.signal,
      };
      const key = request.headers["api-key"] as string;
      const heartbeat = setInterval(() => void beat(client, key, opts), opts.heartbeatMs);
      out.write(": connected\n\n");
      stream(client, opts)
        .catch((e: unknown) => request.log.warn({ err: e }, "change feed stream failed"))
        .finally(() => {
          clearInterval(heartbeat);
          open.delete(abort);
          opts.hub.clients.dec();
          if (!out.destroyed) out.end();
        });
      return reply;
    },
  );
}

interface Client {
  out: ServerResponse;
  /** The id of the last event handled (sent or filtered out). */
  cursor: number;
  filter: ChangeFilter;
  rules: ReturnType<typeof compiledRulesOf>;
  projectId: number;
  signal: AbortSignal;
}

/** Sends the client every event after its cursor that passes its filter, until it goes away. */
async function stream(c: Client, opts: ChangesRoutesOptions): Promise<void> {
  while (!c.signal.aborted) {
    const page = await opts.hub.page(c.cursor, PAGE);
    if (page.length === 0) {
      await opts.hub.waitBeyond(c.cursor, c.signal);
      continue;
    }
    for (const { event, text } of page) {
      if (c.signal.aborted) return;
      c.cursor = event.id;
      if (!matchesChange(event, c.filter, c.rules, c.projectId)) continue;
      if (!(await write(c.out, text, opts.stallMs))) return;
      opts.hub.sent.inc({ type: event.type });
    }
  }
}

/**
 * A heartbeat: a comment and the cursor (an `id` without data moves a client's Last-Event-ID past
 * the events its filter skipped, and dispatches nothing). The key is checked again: a key revoked
 * ends its streams; a project's changed settings apply from here on.
 */
async function beat(c: Client, key: string, opts: ChangesRoutesOptions): Promise<void> {
  if (c.signal.aborted || c.out.writableLength > HEARTBEAT_BACKLOG_BYTES) return;
  const v = await opts.verifier.verify(key).catch(() => undefined);
  if (v === null) {
    c.out.end(errorEvent("API_KEY_INVALID", "The API key was revoked."));
    return;
  }
  if (v) {
    // A key that expired, or whose scope lost the feed, ends its streams as a revoked one does.
    const refusal = keyRefusal(v.key, "changes", (opts.clock ?? Date.now)());
    if (refusal !== null) {
      c.out.end(errorEvent(refusal.code, refusal.message));
      return;
    }
    c.rules = compiledRulesOf(v.project.settings);
  }
  if (!c.out.destroyed && !c.out.writableEnded) c.out.write(`: heartbeat\nid: ${c.cursor}\n\n`);
}

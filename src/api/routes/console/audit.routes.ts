import { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import {
  allAudit,
  auditCsv,
  auditJsonLines,
  listAudit,
  parseAuditFilter,
} from "../../../accounts/audit-query.js";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { AppError } from "../../../domain/errors.js";
import { consoleRouter, projectIdOf } from "./console-route.js";
import { ok, ProjectParams } from "./console.schemas.js";

const text = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

// Strings only: each field is parsed by parseAuditFilter, whose 400 names the field.
const AuditQuery = Type.Object({
  kind: text("Only this kind of change (project.update, settings.update, key.create, …)"),
  member: text("Only the changes made by this account id"),
  from: text("From this date (YYYY-MM-DD, UTC) or ISO 8601 time"),
  to: text("Up to this date (its whole day) or ISO 8601 time"),
  cursor: text("The previous page's nextCursor"),
  limit: text("Entries per page: 1 to 200 (50)"),
  format: text("json (a page, the default), csv or jsonl (every matching entry, streamed)"),
});

const EXPORTS = {
  csv: { type: "text/csv; charset=utf-8", ext: "csv", render: auditCsv },
  jsonl: { type: "application/jsonl; charset=utf-8", ext: "jsonl", render: auditJsonLines },
} as const;

/** A project's audit log (accounts/audit-log.ts): owners and admins only; read only, no route edits it. */
export function auditRoutes(scope: FastifyInstance, services: ConsoleServices): void {
  const db = services.projects.repo.db;
  consoleRouter(scope).get("/projects/:projectId/audit", {
    summary: "The project's audit log, newest first, or its export as CSV or JSON Lines",
    access: "audit.read",
    params: ProjectParams,
    querystring: AuditQuery,
    handler: async (request, reply) => {
      const { format = "json", ...query } = request.query;
      const filter = parseAuditFilter(query);
      const projectId = projectIdOf(request);
      if (format === "json") return ok(await listAudit(db, projectId, filter));
      if (format !== "csv" && format !== "jsonl")
        throw new AppError("INVALID_PARAMETER", 'The parameter "format" is json, csv or jsonl.');
      if (query.cursor !== undefined || query.limit !== undefined)
        throw new AppError(
          "INVALID_PARAMETER",
          'The parameter "cursor" (and "limit") is for format=json only.',
        );
      const e = EXPORTS[format];
      const { kind, memberId, from, to } = filter;
      reply
        .type(e.type)
        .header("content-disposition", `attachment; filename="audit-project-${projectId}.${e.ext}"`);
      return reply.send(Readable.from(e.render(allAudit(db, projectId, { kind, memberId, from, to }))));
    },
  });
}

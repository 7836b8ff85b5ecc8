import type { FastifyInstance } from "fastify";
import type { ConsoleServices } from "../../../accounts/console-services.js";
import { AppError } from "../../../domain/errors.js";
import type { RankedDomain } from "../../../resolution/rank.js";
import { shapeRecord, type WireRecord } from "../../../resolution/record-shape.js";
import type { Resolution } from "../../../resolution/resolution.js";
import { errorEnvelope } from "../../plugins/errors.plugin.js";
import { queryCheck } from "../v1/v1.keywords.js";
import { filterOf, quote } from "../v1/v1.params.js";
import { NameQuery, ReverseQuery } from "../v1/v1.schemas.js";
import type { TryAnswer } from "./console.types.js";
import { consoleRouter, projectIdOf as pid } from "./console-route.js";
import { DryRunBody, ok, ProjectParams, SETTINGS_BODY_LIMIT, TryBody } from "./console.schemas.js";

/** v1's checks of a query, refusing in the console's words: it names body fields, not parameters. */
const asField = { what: "field", rename: (p: string) => (p === "walletAddress" ? "address" : p) };
const checkName = queryCheck(NameQuery, asField);
const checkAddress = queryCheck(ReverseQuery, asField);

function explainRows(ranked: RankedDomain[], records: WireRecord[]) {
  return ranked.map((r, i) => ({
    domain: records[i].domain,
    network: records[i].network,
    provider: records[i].provider,
    score: records[i].score,
    rules: r.details.map((d) => ({ rule: d.rule, points: d.effect, description: d.reason })),
  }));
}

/**
 * "Try it" (the answer API v1 gives this project's keys, without a key, a quota or usage) and the
 * dry run of a settings change (which names change winner), both computed on the server.
 */
export function tryRoutes(scope: FastifyInstance, services: ConsoleServices, resolution: Resolution): void {
  const { clock } = services;
  const route = consoleRouter(scope);

  route.post("/projects/:projectId/try", {
    summary: "What API v1 answers this project's keys (not counted against the quota)",
    access: "settings.read",
    params: ProjectParams,
    body: TryBody,
    handler: async (request) => {
      await services.throttle.hit("try", request.session!.sessionId);
      const b = request.body;
      const settings = (await services.projects.getSettings(pid(request))) as Record<string, unknown>;
      const forward = b.method !== "reverse-resolve";
      const explain = forward && b.explain === true;
      const q: Record<string, unknown> = forward
        ? { domain: b.domain, network: b.network, provider: b.provider }
        : { walletAddress: b.address, network: b.network, provider: b.provider };
      const refused = (forward ? checkName : checkAddress)(q);
      // No name (or an empty one), no address: the console says for which method.
      const absent = forward ? refused?.details?.parameter === "domain" : b.address === undefined;
      if (refused?.code === "MISSING_PARAMETER" && absent)
        throw new AppError(
          "MISSING_PARAMETER",
          `The field "${forward ? "domain" : "address"}" is required for ${b.method}.`,
        );
      if (refused) throw refused;
      const input = (forward ? q.domain : q.walletAddress) as string;
      const ctx = { projectSettings: settings, country: null, now: clock(), explain };
      const query = new URLSearchParams(
        Object.entries({ ...q, ...(explain ? { explain: "true" } : {}) }).filter(
          (e): e is [string, string] => e[1] !== undefined,
        ),
      );
      const answer: Omit<TryAnswer, "answer" | "explain" | "status"> = {
        method: b.method,
        request: `/svc/api/v1/${b.method}?${query}`,
      };
      if (b.method === "reverse-resolve") {
        const ranked = await resolution.reverseResolve(input, filterOf(q), ctx);
        const data = ranked.map((r) => shapeRecord(r, "reverse", false));
        return ok({ ...answer, status: 200, answer: { result: true, data }, explain: null });
      }
      const ranked =
        b.method === "resolve"
          ? await resolution.resolve(input, filterOf(q), ctx).then((r) => (r === null ? [] : [r]))
          : await resolution.deepResolve(input, filterOf(q), ctx);
      const records = ranked.map((r) => shapeRecord(r, "forward", explain));
      const rows = explain ? explainRows(ranked, records) : null;
      if (b.method === "resolve" && records.length === 0) {
        const notFound = errorEnvelope("DOMAIN_NOT_FOUND", `No domain matches ${quote(input)}.`);
        return ok({ ...answer, status: 404, answer: notFound, explain: rows });
      }
      const data = b.method === "resolve" ? records[0] : records;
      return ok({ ...answer, status: 200, answer: { result: true, data }, explain: rows });
    },
  });
  route.post("/projects/:projectId/settings/dry-run", {
    summary: "Which indexed names would change winner with these settings (nothing is saved)",
    access: "settings.write",
    params: ProjectParams,
    body: DryRunBody,
    bodyLimit: SETTINGS_BODY_LIMIT,
    handler: async (request) =>
      ok(await services.projects.dryRunSettings(pid(request), request.body.settings)),
  });
}

import { type KyselyPlugin, type QueryResult, type RootOperationNode, sql, type UnknownRow } from "kysely";
import type { KyselyBacked } from "./raw-db.js";

type Db = KyselyBacked["db"];

/**
 * Records the SQL and parameters of every query run through the Kysely instance it returns: the
 * statements a store's own query functions send, for `queryPlan` to explain as they are.
 */
export function captureQueries(db: Db) {
  const seen: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      const compiled = db.getExecutor().compileQuery(node as RootOperationNode, queryId);
      seen.push({ sql: compiled.sql, parameters: compiled.parameters });
      return node;
    },
    async transformResult({ result }): Promise<QueryResult<UnknownRow>> {
      return result;
    },
  };
  return { db: db.withPlugin(plugin), seen };
}

/**
 * The plan of a statement as text (SQLite's `explain query plan` details, PostgreSQL's `explain`
 * lines), asked on PostgreSQL with sequential scans off so that a table scan costs more than any
 * index. Nothing is executed: a delete's plan leaves its rows in place.
 */
export async function queryPlan(
  db: Db,
  backend: string,
  statement: string,
  parameters: readonly unknown[],
): Promise<string> {
  return db.connection().execute(async (c) => {
    const run = async <R>(text: string) => {
      const query = {
        sql: text,
        parameters,
        query: { kind: "RawNode" },
        queryId: { queryId: "plan" },
      } as unknown as Parameters<typeof c.executeQuery>[0];
      return (await c.executeQuery<R>(query)).rows;
    };
    if (backend === "sqlite")
      return (await run<{ detail: string }>(`explain query plan ${statement}`))
        .map((r) => r.detail)
        .join("\n");
    await sql`set enable_seqscan = off`.execute(c);
    try {
      return (await run<{ "QUERY PLAN": string }>(`explain ${statement}`))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    } finally {
      await sql`reset enable_seqscan`.execute(c);
    }
  });
}

import { type Kysely, sql } from "kysely";
import type { UnscoredName } from "../scoring-data.port.js";
import { type Db, MAX_IN } from "./rows.js";

/* The incremental rescoring's queries (migration 0014), shared by both backends. */

interface RescoreStateDatabase {
  name_holders: { name: string; version: number | string; scored_version: number | string };
  scoring_state: { key: string; value: string };
}

function stateDb(db: Db): Kysely<RescoreStateDatabase> {
  return db as unknown as Kysely<RescoreStateDatabase>;
}

/** Names whose holder count crossed one ↔ several since they were last scored (partial index). */
export async function findUnscoredNames(db: Db, limit: number): Promise<UnscoredName[]> {
  const rows = await stateDb(db)
    .selectFrom("name_holders")
    .select(["name", "version"])
    .where(sql<boolean>`version <> scored_version`)
    .orderBy("name")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ name: r.name, version: Number(r.version) }));
}

/**
 * Records the versions scored. A name whose version moved again meanwhile (a crawler wrote it
 * after the job read it) stays unscored: the next pass takes it.
 */
export async function markNamesScored(db: Db, rows: readonly UnscoredName[]): Promise<void> {
  for (let i = 0; i < rows.length; i += MAX_IN / 2) {
    const values = sql.join(rows.slice(i, i + MAX_IN / 2).map((r) => sql`(${r.name}, ${r.version})`));
    await sql`update name_holders set scored_version = cast(v.column2 as integer) from (values ${values}) as v
      where name_holders.name = v.column1`.execute(db);
  }
}

export async function findScoringState(db: Db, key: string): Promise<string | null> {
  const row = await stateDb(db)
    .selectFrom("scoring_state")
    .select("value")
    .where("key", "=", key)
    .executeTakeFirst();
  return row?.value ?? null;
}

export async function setScoringState(db: Db, key: string, value: string): Promise<void> {
  await stateDb(db)
    .insertInto("scoring_state")
    .values({ key, value })
    .onConflict((oc) => oc.column("key").doUpdateSet({ value }))
    .execute();
}

import { type Kysely, sql } from "kysely";
import type { Dialect } from "../store.js";
import { reverseLabels } from "../kysely/reversed-name.js";

/**
 * `domains.rname`: the name's labels in reverse order (`wallet.b.a` for `a.b.wallet`), indexed, so
 * "is any name below `b.wallet`?" (DNS empty non-terminals) is one range scan
 * (`rname > 'wallet.b.' and rname < 'wallet.b/'`). Byte order on both backends (PostgreSQL:
 * collation "C"; a locale collation would ignore the dots). Existing rows are filled in pages.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const collate = dialect === "postgres" ? sql.raw(` collate "C"`) : sql.raw("");
  await sql`alter table domains add column rname text not null default ''${collate}`.execute(db);
  let after = 0;
  for (;;) {
    const { rows } = await sql<{ id: number | string; name: string }>`
      select id, name from domains where id > ${after} order by id limit 5000`.execute(db);
    if (rows.length === 0) break;
    for (const r of rows)
      await sql`update domains set rname = ${reverseLabels(r.name)} where id = ${r.id}`.execute(db);
    after = Number(rows[rows.length - 1]?.id);
  }
  await sql`create index domains_rname on domains (rname)`.execute(db);
}

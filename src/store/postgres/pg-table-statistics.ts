import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

/**
 * The planner's statistics of the tables a crawl grows, kept up with a backfill.
 *
 * PostgreSQL plans from the statistics ANALYZE took. Autovacuum takes them again once a table has
 * changed by a tenth, but it looks only once a minute (`autovacuum_naptime`): a backfill into a
 * fresh or small store doubles its tables many times in between, and plans made for a table of a
 * few rows read it whole. Measured on the crawl bench's million events, default settings: the
 * journal's read by token planned as a scan of the source's whole index range (Index Cond on
 * `source_id` only: 8.8 million heap pages read), the records' delete as a sequential scan (95
 * scans, 24 million rows), for lack of statistics.
 *
 * After a committed write of the map, at most once a `intervalMs`, this asks `pg_stat_user_tables`
 * which of TABLES at least doubled since their last analysis (and changed by MIN_CHANGES rows), and
 * analyzes those, one at a time, on the pool beside the writer. A store that grows slowly never
 * doubles: autovacuum keeps it, as before. Errors are ignored (a role that may not analyze a table
 * gets a warning, not an error; a server gone away is the writer's to report).
 */
export const TABLES = ["journal", "domains", "records", "reverse_records", "change_events", "name_holders"];
/** Changes below which a table is left to autovacuum (its own threshold is 50 rows + 10 %). */
export const MIN_CHANGES = 1_000;

export class TableStatistics {
  private lastCheck = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | null = null;
  /** Tables analyzed by this process, in order (tests, logs). */
  readonly analyzed: string[] = [];

  constructor(
    private readonly db: Kysely<Database>,
    private readonly intervalMs = 1_000,
  ) {}

  /** Called after a committed map write: starts a check when none runs and the interval passed. */
  afterWrite(): void {
    if (this.running !== null || performance.now() - this.lastCheck < this.intervalMs) return;
    void this.start();
  }

  /** A check now, whatever the interval, after the one under way; resolves when it has ended. */
  async checkNow(): Promise<void> {
    await this.running;
    await (this.running ?? this.start());
  }

  private start(): Promise<void> {
    this.lastCheck = performance.now();
    const run = this.check()
      .catch(() => {})
      .finally(() => {
        if (this.running === run) this.running = null;
      });
    this.running = run;
    return run;
  }

  /** Resolves once no check runs (the store's close waits for it). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async check(): Promise<void> {
    const { rows } = await sql<{ relname: string }>`
      select relname from pg_stat_user_tables
      where schemaname = current_schema() and relname = any(${TABLES}::text[])
        and n_mod_since_analyze >= greatest(${MIN_CHANGES}::bigint, n_live_tup - n_mod_since_analyze)
      order by relname`.execute(this.db);
    for (const { relname } of rows) {
      // The name comes from TABLES through the catalog: a known identifier.
      await sql`analyze ${sql.table(relname)}`.execute(this.db);
      this.analyzed.push(relname);
    }
  }
}

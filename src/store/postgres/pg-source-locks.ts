import { createHash } from "node:crypto";
import pg from "pg";
import type { SourceLocks } from "../crawler-log.port.js";

/** The advisory-lock key of a source: a stable signed 64-bit number from its id (as a string). */
export function sourceLockKey(sourceId: string): string {
  const h = createHash("sha256").update(`omniname:source-lease:${sourceId}`).digest();
  return h.readBigInt64BE(0).toString();
}

/**
 * SourceLocks on PostgreSQL session-level advisory locks (`pg_try_advisory_lock`), all held on one
 * dedicated client of this process (a pooled client cannot: the pool hands it to other queries,
 * and the lock belongs to the session). When that connection errors or ends, every lock of this
 * process is gone (the server frees them with the session): `holds` turns false at once, so the
 * writers drop to standby; the next `tryLock` connects again.
 */
export class PgSourceLocks implements SourceLocks {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client | null> | null = null;
  private readonly held = new Set<string>();
  private closed = false;

  constructor(private readonly url: string) {}

  private connect(): Promise<pg.Client | null> {
    if (this.client !== null) return Promise.resolve(this.client);
    if (this.connecting !== null) return this.connecting;
    this.connecting = (async () => {
      const client = new pg.Client({ connectionString: this.url });
      client.on("error", () => this.lost(client));
      client.on("end", () => this.lost(client));
      try {
        await client.connect();
      } catch {
        this.lost(client);
        return null;
      }
      if (this.closed) {
        await client.end().catch(() => {});
        return null;
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private lost(client: pg.Client): void {
    if (this.client !== null && this.client !== client) return;
    this.client = null;
    this.held.clear();
    client.end().catch(() => {});
  }

  async tryLock(sourceId: string): Promise<boolean> {
    if (this.closed) return false;
    if (this.holds(sourceId)) return true;
    const client = await this.connect();
    if (client === null) return false;
    try {
      const r = await client.query<{ ok: boolean }>("select pg_try_advisory_lock($1::bigint) as ok", [
        sourceLockKey(sourceId),
      ]);
      // Taken on a connection lost in the meantime: not held.
      if (r.rows[0]?.ok !== true || this.client !== client) return false;
      this.held.add(sourceId);
      return true;
    } catch {
      this.lost(client);
      return false;
    }
  }

  holds(sourceId: string): boolean {
    return this.client !== null && this.held.has(sourceId);
  }

  async unlock(sourceId: string): Promise<void> {
    const client = this.client;
    if (client === null || !this.held.delete(sourceId)) return;
    await client.query("select pg_advisory_unlock($1::bigint)", [sourceLockKey(sourceId)]).catch(() => {
      this.lost(client);
    });
  }

  /** The backend pid of the lock connection (tests terminate it to simulate a dead process). */
  async backendPid(): Promise<number | null> {
    if (this.client === null) return null;
    const r = await this.client.query<{ pid: number }>("select pg_backend_pid() as pid");
    return r.rows[0]?.pid ?? null;
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    this.held.clear();
    // Ending the session frees its locks.
    await c?.end().catch(() => {});
  }
}

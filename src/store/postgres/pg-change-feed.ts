import pg from "pg";
import type { ChangeFeed } from "../change-feed.port.js";

/** The one NOTIFY channel every omniname process LISTENs on. */
export const CHANNEL = "omniname_changes";

const MAX_BACKOFF_MS = 5_000;

/**
 * A ChangeFeed on PostgreSQL LISTEN/NOTIFY: one dedicated client LISTENs (a pooled client cannot:
 * the pool hands it to queries). NOTIFY is transactional, so a topic published inside a write
 * transaction reaches the listeners only when (and if) it commits. When the listening connection
 * drops, `up` turns false and it reconnects with backoff (250 ms doubling to 5 s); on reconnection
 * listeners get `*` (anything may have changed while it was down).
 */
export class PgChangeFeed implements ChangeFeed {
  private client: pg.Client | null = null;
  private readonly listeners = new Set<(topic: string) => void>();
  private closed = false;
  private backoffMs = 250;
  private timer: NodeJS.Timeout | null = null;
  up = false;

  constructor(
    private readonly url: string,
    private readonly notify: (topic: string) => Promise<void>,
  ) {}

  /** Connects and LISTENs; resolves once listening, or after the first failure (then retries). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    client.on("notification", (m) => {
      if (m.channel === CHANNEL && m.payload) this.emit(m.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch {
      this.lost(client);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    const wasDown = !this.up;
    this.up = true;
    this.backoffMs = 250;
    if (wasDown) this.emit("*");
  }

  private lost(client: pg.Client): void {
    if (this.client !== null && this.client !== client) return;
    this.client = null;
    this.up = false;
    client.end().catch(() => {});
    if (this.closed || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, this.backoffMs);
    this.timer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
  }

  private emit(topic: string): void {
    for (const l of this.listeners) l(topic);
  }

  /** The backend pid of the listening connection (tests terminate it to simulate a lost channel). */
  async listenerPid(): Promise<number | null> {
    if (this.client === null) return null;
    const r = await this.client.query<{ pid: number }>("select pg_backend_pid() as pid");
    return r.rows[0]?.pid ?? null;
  }

  on(listener: (topic: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(topic: string): Promise<void> {
    return this.notify(topic);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.up = false;
    if (this.timer !== null) clearTimeout(this.timer);
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }
}

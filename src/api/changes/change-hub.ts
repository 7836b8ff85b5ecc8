import { Counter, Gauge, type Registry } from "prom-client";
import type { ChangeEvent } from "../../domain/change-events.js";
import { CHANGES_TOPIC, eventData } from "../../workers/change-event-data.js";
import type { Store } from "../../store/store.js";
import type { DomainMap } from "../../store/domain-map.port.js";

/** An event of the log with its SSE text, formatted once and shared by every client that gets it. */
export interface FeedEvent {
  event: ChangeEvent;
  text: string;
}

export interface ChangeHubOptions {
  store: Pick<Store, "changeLog" | "changes"> & { domainMap: Pick<DomainMap, "readVersion"> };
  /** Events kept in memory for the clients at the head (older ones are read from the store). */
  ringSize?: number;
  /** And at most this many characters of their text (an event's records may be large). Default 16 Mi. */
  ringChars?: number;
  /** Without a change channel (SQLite): how often the commit watch is asked. Default 50 ms. */
  pollMs?: number;
  /** With a channel: a read anyway this often, for a notification lost while it was down. Default 1 s. */
  safetyPollMs?: number;
  /** Backlog pages read from the store at once, across clients (bounds their memory). Default 4. */
  backlogReaders?: number;
  registry?: Registry | null;
  /** Prune events older than this (CHANGES_RETENTION_DAYS); absent: this hub does not prune. */
  retentionMs?: number;
  clock?: () => number;
}

/** How often a hub prunes the log (every API process does; a prune finding nothing costs one query). */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_PAGE = 10_000;

/** The SSE text of an event: `id`, `event` and one `data` line of JSON (docs/api.md). */
export function formatEvent(e: ChangeEvent): string {
  return `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(eventData(e))}\n\n`;
}

/**
 * The change log's tail, shared by every feed client of this process: one reader follows the log
 * (on PostgreSQL when the change channel says the map changed, on SQLite when the commit watch
 * sees a commit), keeps the newest events in a ring, and wakes the clients waiting at the head.
 * Clients behind the ring page through the store, a few pages at a time.
 *
 * @example
 * const hub = await createChangeHub({ store });
 * const page = await hub.page(cursor, 100); // [] → await hub.waitBeyond(cursor, signal)
 */
export class ChangeHub {
  /** Every event with an id in (ringFrom, newest] is in `ring`, ascending. */
  private ring: FeedEvent[] = [];
  /** Characters of the ring's texts. */
  private chars = 0;
  private ringFrom = 0;
  newest = 0;
  private waiters = new Set<() => void>();
  private reading: Promise<void> | null = null;
  private again = false;
  private timers: NodeJS.Timeout[] = [];
  private off: (() => void) | null = null;
  private lastVersion: number | null = null;
  private backlogSlots: number;
  private backlogQueue: Array<() => void> = [];
  private closed = false;
  private ready = false;
  readonly clients: Gauge;
  readonly sent: Counter<"type">;

  constructor(private readonly opts: ChangeHubOptions) {
    this.backlogSlots = opts.backlogReaders ?? 4;
    const registers = opts.registry ? [opts.registry] : [];
    this.clients = new Gauge({ name: "omniname_feed_clients", help: "Open change feed streams", registers });
    this.sent = new Counter({
      name: "omniname_feed_events_sent_total",
      help: "Change feed events sent to clients, by type",
      labelNames: ["type"],
      registers,
    });
  }

  /** Starts at the log's head; with the store down, at its first read that succeeds. */
  private async init(): Promise<void> {
    this.newest = (await this.opts.store.changeLog.changeLogBounds()).newest;
    this.ringFrom = this.newest;
    this.ready = true;
  }

  async start(): Promise<void> {
    const { store } = this.opts;
    await this.init().catch(() => {});
    const feed = store.changes;
    if (feed) {
      this.off = feed.on((topic) => {
        if (topic === "map" || topic === "*" || topic === CHANGES_TOPIC || topic.startsWith("project:"))
          this.refresh();
      });
      this.timers.push(setInterval(() => this.refresh(), this.opts.safetyPollMs ?? 1_000));
    } else {
      this.lastVersion = store.domainMap.readVersion();
      this.timers.push(
        setInterval(() => {
          const v = store.domainMap.readVersion();
          if (v === null || v !== this.lastVersion) {
            this.lastVersion = v;
            this.refresh();
          }
        }, this.opts.pollMs ?? 50),
      );
    }
    const retention = this.opts.retentionMs;
    if (retention !== undefined) {
      const clock = this.opts.clock ?? Date.now;
      const prune = async () => {
        while (
          (await store.changeLog.pruneChangeEvents(clock() - retention, PRUNE_PAGE).catch(() => 0)) ===
          PRUNE_PAGE
        ) {}
      };
      void prune();
      this.timers.push(setInterval(() => void prune(), PRUNE_EVERY_MS));
    }
    for (const t of this.timers) t.unref();
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.off?.();
    this.wake();
  }

  /** Reads what was committed beyond `newest` (single flight: a call during a read reads again after it). */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      if (!this.ready) await this.init().catch(() => {});
      do {
        this.again = false;
        if (!this.ready) break;
        for (;;) {
          const page = await this.opts.store.changeLog
            .findChangeEventsAfter(this.newest, 500)
            .catch(() => []);
          if (page.length === 0) break;
          for (const e of page) {
            const text = formatEvent(e);
            this.ring.push({ event: e, text });
            this.chars += text.length;
          }
          this.newest = page[page.length - 1].id;
          this.trim();
          this.wake();
          if (page.length < 500) break;
        }
      } while (this.again && !this.closed);
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  /** Drops the oldest events beyond the ring's bounds (count and size); clients behind read the store. */
  private trim(): void {
    const maxCount = this.opts.ringSize ?? 4_096;
    const maxChars = this.opts.ringChars ?? 16 * 1024 * 1024;
    let over = 0;
    while (over < this.ring.length && (this.ring.length - over > maxCount || this.chars > maxChars)) {
      this.chars -= this.ring[over].text.length;
      over++;
    }
    if (over > 0) this.ringFrom = this.ring.splice(0, over)[over - 1].event.id;
  }

  private wake(): void {
    const ws = [...this.waiters];
    this.waiters.clear();
    for (const w of ws) w();
  }

  /** Resolves once an event beyond `cursor` is known, or `signal` aborts, or the hub closes. */
  waitBeyond(cursor: number, signal: AbortSignal): Promise<void> {
    if (this.newest > cursor || signal.aborted || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** The events after `cursor` (at most `limit`): from the ring when it holds them, else the store. */
  async page(cursor: number, limit: number): Promise<FeedEvent[]> {
    if (cursor >= this.ringFrom) {
      // The ring is ascending: find the first id beyond the cursor.
      let lo = 0;
      let hi = this.ring.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.ring[mid].event.id <= cursor) lo = mid + 1;
        else hi = mid;
      }
      return this.ring.slice(lo, lo + limit);
    }
    await this.acquire();
    try {
      const events = await this.opts.store.changeLog.findChangeEventsAfter(cursor, limit);
      // Never beyond what the ring's reader has seen: the order of commits is its business.
      return events.filter((e) => e.id <= this.newest).map((e) => ({ event: e, text: formatEvent(e) }));
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.backlogSlots > 0) {
      this.backlogSlots--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.backlogQueue.push(resolve));
  }

  private release(): void {
    const next = this.backlogQueue.shift();
    if (next) next();
    else this.backlogSlots++;
  }
}

export async function createChangeHub(opts: ChangeHubOptions): Promise<ChangeHub> {
  const hub = new ChangeHub(opts);
  await hub.start();
  return hub;
}

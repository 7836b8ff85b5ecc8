import { sql } from "kysely";
import type { Logger } from "pino";
import type { ChangeEvent, ChangeEventWrite } from "../domain/change-events.js";
import type { DomainWithRecords } from "../domain/types.js";
import { compileProjectRules } from "../scoring/project-rules.js";
import type { Ranker } from "../scoring/scoring-ranker.js";
import type { Store } from "../store/store.js";
import { PollLoop } from "./poll-loop.js";
import { CHANGES_TOPIC } from "./change-event-data.js";
import {
  candidatesBefore,
  type RankScope,
  ranksAsDefault,
  sameRef,
  winnerEvent,
  winnerUnder,
} from "../scoring/winner-events.js";

/** change_log_state's key of the last change log id the deriver has read. */
const CURSOR_KEY = "winner_cursor";
const PAGE = 500;

export interface WinnerDeriverOptions {
  store: Store;
  ranker: Ranker;
  logger: Pick<Logger, "warn">;
  /** The time the ranker is asked at (expiry, age). */
  clock: () => number;
  /** How often the change log is looked at. Default 100 ms. */
  pollMs?: number;
}

/** What the deriver reads: the names' holders, the projects' settings (a store or a transaction). */
export type WinnerReads = Pick<Store, "scoring" | "accounts">;

/** The scopes a map change is ranked under: the defaults (shared) and each project with its own settings. */
export async function rankScopes(store: WinnerReads): Promise<RankScope[]> {
  const rows = await sql<{ id: number | string; settings: string }>`select id, settings from projects
    where settings <> '{}' order by id`.execute(store.accounts);
  const scopes: RankScope[] = [{ projectId: null, settings: {}, rules: compileProjectRules({}) }];
  for (const r of rows.rows) {
    let settings: Record<string, unknown>;
    try {
      settings = JSON.parse(r.settings) as Record<string, unknown>;
    } catch {
      continue;
    }
    const rules = compileProjectRules(settings);
    if (!ranksAsDefault(rules)) scopes.push({ projectId: Number(r.id), settings, rules });
  }
  return scopes;
}

/**
 * Of a page of the log, the map's events by name (a rename counts for both names), ascending. An
 * SNS announcement at `confirmed` (`payload.announced`) is not the map's yet: the map's state it
 * would be ranked against is older than the event; its settlement derives it (sns-sync.ts).
 */
function mapEventsByName(page: ChangeEvent[]): Map<string, ChangeEvent[]> {
  const out = new Map<string, ChangeEvent[]>();
  const add = (name: string, e: ChangeEvent) => {
    const list = out.get(name);
    if (list) list.push(e);
    else out.set(name, [e]);
  };
  for (const e of page) {
    if (e.projectId !== null || !e.type.startsWith("domain.") || e.payload.announced) continue;
    add(e.name, e);
    const renamed = e.payload.nameChanged;
    if (renamed && renamed.from !== e.name) add(renamed.from, e);
  }
  return out;
}

/** How many domains held the name before the events, from how many hold it now. */
function holdersBefore(now: number, name: string, events: ChangeEvent[]): number {
  let n = now;
  for (const e of events) {
    const arrived = e.type === "domain.created" || (e.payload.nameChanged && e.name === name);
    const left = e.type === "domain.removed" || (e.payload.nameChanged && e.name !== name);
    if (arrived) n--;
    if (left) n++;
  }
  return n;
}

/**
 * Derives winner.changed from the change log (docs/api.md, "Change feed"), run by every API
 * process: it reads the map's events after its cursor, ranks each name that had or has more than
 * one holder under every scope before and after each of its events, appends a winner.changed for
 * each event that moved the winner of a collision, and advances the cursor in the same transaction:
 * on PostgreSQL under the cursor row's lock (one process ranks a page, the others skip it), on
 * SQLite conditionally (of several processes one appends a page). A derived event carries the source and block of the change that
 * caused it: a reorg undoing that block retracts it with the others.
 */
export class WinnerDeriver {
  private readonly loop: PollLoop;

  constructor(private readonly o: WinnerDeriverOptions) {
    this.loop = new PollLoop(() => this.tick(), o.pollMs ?? 100, o.logger, "winner.changed pass");
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async cursor(): Promise<number> {
    const db = this.o.store.accounts;
    const r = await sql<{ value: number | string }>`select value from change_log_state
      where key = ${CURSOR_KEY}`.execute(db);
    if (r.rows[0]) return Number(r.rows[0].value);
    // First start: from the log's head (earlier changes are not derived).
    const { newest } = await this.o.store.changeLog.changeLogBounds();
    await sql`insert into change_log_state (key, value) values (${CURSOR_KEY}, ${newest})
      on conflict (key) do nothing`.execute(db);
    return this.cursor();
  }

  /** One pass: pages of the log until the head. Returns the number of events appended. */
  async tick(): Promise<number> {
    await this.cursor();
    let appended = 0;
    for (;;) {
      const step = this.o.store.dialect === "postgres" ? await this.lockedPage() : await this.racedPage();
      if (step === null) return appended;
      appended += step.appended;
      if (step.read < PAGE) return appended;
    }
  }

  /**
   * SQLite: derive a page, then advance the cursor only if it still is where it was read (of
   * several processes on one file one appends; the others' work is dropped). A write lock held
   * while ranking would stall the crawler's writes, so the race is cheaper there.
   */
  private async racedPage(): Promise<{ read: number; appended: number } | null> {
    const from = await this.cursor();
    const page = await this.o.store.changeLog.findChangeEventsAfter(from, PAGE);
    if (page.length === 0 || this.loop.stopped) return null;
    const events = await this.derive(page);
    const to = page[page.length - 1]!.id;
    const moved = await this.o.store.transaction(async (tx) => {
      const r = await sql`update change_log_state set value = ${to}
          where key = ${CURSOR_KEY} and value = ${from}`.execute(tx.accounts);
      if (Number(r.numAffectedRows ?? 0) !== 1) return false;
      await tx.changeLog.appendChangeEvents(events);
      if (events.length > 0) await tx.changes?.publish(CHANGES_TOPIC);
      return true;
    });
    return { read: page.length, appended: moved ? events.length : 0 };
  }

  /**
   * PostgreSQL: the cursor's row is locked (`for update skip locked`) for the page's derivation,
   * so of several API processes one ranks a page and the others skip it at once (no process
   * ranks a page another is ranking, then throws its work away). Null when nothing is left or
   * another process holds the page.
   */
  private lockedPage(): Promise<{ read: number; appended: number } | null> {
    return this.o.store.transaction(async (tx) => {
      const r = await sql<{ value: number | string }>`select value from change_log_state
        where key = ${CURSOR_KEY} for update skip locked`.execute(tx.accounts);
      if (!r.rows[0]) return null;
      const page = await this.o.store.changeLog.findChangeEventsAfter(Number(r.rows[0].value), PAGE);
      if (page.length === 0 || this.loop.stopped) return null;
      const events = await this.derive(page);
      await sql`update change_log_state set value = ${page[page.length - 1]!.id}
        where key = ${CURSOR_KEY}`.execute(tx.accounts);
      await tx.changeLog.appendChangeEvents(events);
      if (events.length > 0) await tx.changes?.publish(CHANGES_TOPIC);
      return { read: page.length, appended: events.length };
    });
  }

  /**
   * The winner.changed events of a page of the log, ranked over `store`'s map (default the
   * deriver's store; a transaction whose map has reached the page, for a settlement).
   */
  async derive(page: ChangeEvent[], store: WinnerReads = this.o.store): Promise<ChangeEventWrite[]> {
    const { ranker } = this.o;
    const byName = mapEventsByName(page);
    if (byName.size === 0) return [];
    const holders = await store.scoring.findNameHolders([...byName.keys()]);
    const shared = [...byName].filter(([name, events]) => {
      const now = holders.get(name) ?? 0;
      return now > 1 || holdersBefore(now, name, events) > 1;
    });
    if (shared.length === 0) return [];
    const candidates = new Map<string, DomainWithRecords[]>();
    for (const d of await store.scoring.findRankingCandidates(shared.map(([n]) => n))) {
      const list = candidates.get(d.name);
      if (list) list.push(d);
      else candidates.set(d.name, [d]);
    }
    const scopes = await rankScopes(store);
    const now = this.o.clock();
    const out: ChangeEventWrite[] = [];
    for (const [name, events] of shared) {
      // The name's candidates after each of its events, from the map as it stands, undone one by one.
      const states: DomainWithRecords[][] = [candidates.get(name) ?? []];
      const ids = { next: -1 };
      for (let k = events.length - 1; k >= 0; k--)
        states.unshift(candidatesBefore(name, states[0]!, [events[k]!], ids));
      const tld = name.slice(name.lastIndexOf(".") + 1);
      for (const scope of scopes) {
        let from = winnerUnder(ranker, states[0]!, scope, now);
        events.forEach((e, k) => {
          const to = winnerUnder(ranker, states[k + 1]!, scope, now);
          // A winner moves among colliding domains: one holder before or after this event is not enough.
          const collided = states[k]!.length > 1 || states[k + 1]!.length > 1;
          if (collided && !sameRef(from, to))
            out.push(winnerEvent(name, tld, from, to, scope.projectId, e, now));
          from = to;
        });
      }
    }
    return out;
  }
}

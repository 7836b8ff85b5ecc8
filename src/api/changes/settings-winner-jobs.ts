import { sql } from "kysely";
import type { Logger } from "pino";
import type { ChangeEventWrite } from "../../domain/change-events.js";
import type { Ranker } from "../../scoring/scoring-ranker.js";
import type { Store } from "../../store/store.js";
import { refOf, winnerEvent } from "../../scoring/winner-events.js";
import { type WinnerChange, winnerChangePages } from "../../accounts/settings-dry-run.js";
import { PollLoop } from "../poll-loop.js";
import { CHANGES_TOPIC } from "./change-hub.js";

/** The winner.changed of a settings change for one name: this project only, no block (`cause: settings`). */
function settingsEvent(c: WinnerChange, projectId: number, now: number): ChangeEventWrite {
  const tld = c.name.slice(c.name.lastIndexOf(".") + 1);
  return winnerEvent(c.name, tld, refOf(c.before?.domain), refOf(c.after?.domain), projectId, null, now);
}

export interface SettingsWinnerRun {
  /** Pages this call appended (each with its events and the job's new cursor). */
  pages: number;
  events: number;
}

/**
 * Runs the settings changes' jobs (docs/api.md, "Change feed"; docs/operations.md), oldest first,
 * until none is left or `maxPages` pages were appended: ranks the names of a job one page
 * (`pageSize` names) at a time from its cursor, at the job's time, and appends each page's
 * winner.changed events with the job's next cursor in one transaction, conditionally (only if the
 * job still is where it was read: of several processes one appends a page, the others drop theirs
 * and read the job again; on PostgreSQL the job's row is locked while a page is ranked, and a
 * process finding it locked leaves the job to the one ranking it until its next pass). A job's last page is followed by its `finished_at`. A process killed
 * mid-job leaves the cursor of its last committed page: the next run resumes there. Memory holds
 * one page.
 */
export async function runSettingsWinnerJobs(
  deps: { store: Store; ranker: Ranker; clock: () => number },
  opts: { pageSize?: number; maxPages?: number; stopped?: () => boolean } = {},
): Promise<SettingsWinnerRun> {
  const { store, clock } = deps;
  const stopped = opts.stopped ?? (() => false);
  const maxPages = opts.maxPages ?? Number.POSITIVE_INFINITY;
  const run: SettingsWinnerRun = { pages: 0, events: 0 };
  for (;;) {
    if (stopped() || run.pages >= maxPages) return run;
    const job = await store.findNextSettingsWinnerJob();
    if (!job) return run;
    let version = job.pages;
    let cursor = job.cursor;
    let lost = false;
    const pg = store.dialect === "postgres";
    // A deleted project's job has no one to tell: it is finished without events.
    if (await store.findProjectById(job.projectId)) {
      const pages = winnerChangePages(deps, job.settingsBefore, job.settingsAfter, job.rankAt, {
        start: job.cursor,
        pageSize: opts.pageSize,
      });
      const iter = pages[Symbol.asyncIterator]();
      for (;;) {
        if (stopped()) return run;
        const from = version;
        // SQLite ranks before its write transaction (held while ranking, it would stall the
        // crawler); PostgreSQL inside, under the job row's lock: another process ranking it skips.
        const ahead = pg ? null : await iter.next();
        const step = await store.transaction(async (tx) => {
          if (pg) {
            const lock = await lockJob(tx, job.id, from);
            if (lock !== "held") return lock;
          }
          const next = ahead ?? (await iter.next());
          if (next.done) return "done" as const;
          const page = next.value;
          const events = page.changes.map((c) => settingsEvent(c, job.projectId, clock()));
          if (!(await tx.advanceSettingsWinnerJob(job.id, from, page.cursor, null))) return "lost" as const;
          if (events.length > 0) {
            await tx.appendChangeEvents(events);
            await tx.changes?.publish(CHANGES_TOPIC);
          }
          return { cursor: page.cursor, events: events.length };
        });
        if (step === "busy") return run;
        if (step === "done") break;
        if (step === "lost") {
          lost = true;
          break;
        }
        version++;
        cursor = step.cursor;
        run.pages++;
        run.events += step.events;
        if (run.pages >= maxPages) return run;
      }
    }
    // Another process moved the job: read it again (it goes on from there, or it is finished).
    if (lost || stopped()) continue;
    await store.advanceSettingsWinnerJob(job.id, version, cursor, clock());
  }
}

/**
 * Locks a job's row for this transaction (PostgreSQL): "held" when it is still at `pages`, "busy"
 * when another process holds the lock (it ranks this page), "lost" when it moved or finished.
 */
async function lockJob(tx: Store, id: number, pages: number): Promise<"held" | "busy" | "lost"> {
  const r = await sql<{ pages: number | string; finished_at: number | string | null }>`select pages,
    finished_at from settings_winner_jobs where id = ${id} for update skip locked`.execute(tx.accountsDb);
  const row = r.rows[0];
  if (!row) return "busy";
  return Number(row.pages) === pages && row.finished_at === null ? "held" : "lost";
}

/** How often finished jobs are pruned (every API process does; a prune finding nothing costs one query). */
const PRUNE_EVERY_MS = 10 * 60_000;

export interface SettingsWinnerRunnerOptions {
  store: Store;
  ranker: Ranker;
  logger: Pick<Logger, "warn">;
  clock: () => number;
  /** How often the jobs are looked at. Default 100 ms. */
  pollMs?: number;
  /** Finished jobs older than this are deleted (CHANGES_RETENTION_DAYS). */
  retentionMs: number;
}

/**
 * Runs runSettingsWinnerJobs in every API process, beside the winner.changed deriver: a pass every
 * `pollMs` (until no job is left), and a prune of the finished jobs every 10 minutes.
 */
export class SettingsWinnerRunner {
  private readonly loop: PollLoop;
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: SettingsWinnerRunnerOptions) {
    this.loop = new PollLoop(
      () => this.tick(),
      o.pollMs ?? 100,
      (e) => o.logger.warn({ err: e }, "settings winner.changed job failed"),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  async tick(): Promise<SettingsWinnerRun> {
    const now = this.o.clock();
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await this.o.store.pruneSettingsWinnerJobs(now - this.o.retentionMs);
    }
    return runSettingsWinnerJobs(this.o, { stopped: () => this.loop.stopped });
  }
}

import { sql } from "kysely";
import type { Logger } from "pino";
import type { ChangeEventWrite } from "../domain/change-events.js";
import type { Ranker } from "../scoring/scoring-ranker.js";
import type {
  SettingsWinnerCursor,
  SettingsWinnerFailure,
  SettingsWinnerJob,
} from "../store/settings-winner-jobs.port.js";
import type { Store } from "../store/store.js";
import { refOf, winnerEvent } from "../scoring/winner-events.js";
import { type WinnerChange, winnerChangePages } from "../accounts/settings-dry-run.js";
import { PollLoop } from "./poll-loop.js";
import { CHANGES_TOPIC } from "./change-event-data.js";

/** The winner.changed of a settings change for one name: this project only, no block (`cause: settings`). */
function settingsEvent(c: WinnerChange, projectId: number, now: number): ChangeEventWrite {
  const tld = c.name.slice(c.name.lastIndexOf(".") + 1);
  return winnerEvent(c.name, tld, refOf(c.before?.domain), refOf(c.after?.domain), projectId, null, now);
}

export interface SettingsWinnerRun {
  /** Pages this call appended (each with its events and the job's new cursor). */
  pages: number;
  events: number;
  /** Pages that threw, each counted as an attempt of its job (failSettingsWinnerJob). */
  failures: number;
}

/** How a job's failed pages are retried: after `baseMs`, doubling up to `maxMs`, `maxAttempts` in all. */
export interface SettingsWinnerRetry {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
}

/**
 * 10 attempts over about 14 minutes (1 s, 2 s, 4 s ... 256 s, 300 s): a page that still throws then
 * is a defect of its data or of the code, not a passing fault, and the job gives up (failed_at) so
 * that the project's later jobs run. A fault of the store itself (the database away) throws from
 * recording the attempt too and counts nothing: the poll loop logs it and tries again.
 */
export const SETTINGS_WINNER_RETRY: SettingsWinnerRetry = { maxAttempts: 10, baseMs: 1_000, maxMs: 300_000 };

/** A job's failed page as the failure to record: retried after a growing delay, or given up. */
export interface SettingsWinnerFailed extends SettingsWinnerFailure {
  jobId: number;
  projectId: number;
  attempts: number;
  err: unknown;
}

function failureOf(
  e: unknown,
  attempts: number,
  now: number,
  retry = SETTINGS_WINNER_RETRY,
): SettingsWinnerFailure {
  const error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (attempts >= retry.maxAttempts) return { error, retryAt: null, failedAt: now };
  return { error, retryAt: now + Math.min(retry.baseMs * 2 ** (attempts - 1), retry.maxMs), failedAt: null };
}

/**
 * Runs the settings changes' jobs (docs/api.md, "Change feed"; docs/operations.md), oldest first,
 * until none is left or `maxPages` pages were appended: ranks the names of a job one page
 * (`pageSize` names) at a time from its cursor, at the job's time, and appends each page's
 * winner.changed events with the job's next cursor in one transaction, conditionally (only if the
 * job still is where it was read: of several processes one appends a page, the others drop theirs
 * and read the job again; on PostgreSQL the job's row is locked while a page is ranked, and a
 * process finding it locked leaves the job to the one ranking it until its next pass). A job's
 * last page is followed by its `finished_at`. A process killed mid-job leaves the cursor of its
 * last committed page: the next run resumes there. Memory holds one page.
 *
 * A page that throws is an attempt of its job (failSettingsWinnerJob): retried after a growing
 * delay (`retry`, default SETTINGS_WINNER_RETRY) while the other projects' jobs run; after the last
 * attempt the job is finished as failed, so that its project's later jobs run too.
 */
export async function runSettingsWinnerJobs(
  deps: { store: Store; ranker: Ranker; clock: () => number },
  opts: {
    pageSize?: number;
    maxPages?: number;
    stopped?: () => boolean;
    retry?: SettingsWinnerRetry;
    /** Told of each failed page that was recorded (the runner logs it). */
    onFailure?: (f: SettingsWinnerFailed) => void;
  } = {},
): Promise<SettingsWinnerRun> {
  const { store, clock } = deps;
  const stopped = opts.stopped ?? (() => false);
  const maxPages = opts.maxPages ?? Number.POSITIVE_INFINITY;
  const run: SettingsWinnerRun = { pages: 0, events: 0, failures: 0 };
  for (;;) {
    if (stopped() || run.pages >= maxPages) return run;
    const job = await store.winnerJobs.findNextSettingsWinnerJob(clock());
    if (!job) return run;
    const at = { version: job.pages, cursor: job.cursor };
    let outcome: JobOutcome;
    try {
      outcome = await appendJobPages(deps, job, at, run, { ...opts, stopped, maxPages });
    } catch (e) {
      if (stopped()) return run;
      // A page that commits clears the attempts: count from the job's own only if none did here.
      const attempts = (at.version === job.pages ? job.attempts : 0) + 1;
      const failure = failureOf(e, attempts, clock(), opts.retry);
      if (await store.winnerJobs.failSettingsWinnerJob(job.id, at.version, failure)) {
        run.failures++;
        opts.onFailure?.({ jobId: job.id, projectId: job.projectId, attempts, ...failure, err: e });
      }
      continue;
    }
    if (outcome === "return") return run;
    // Another process moved the job: read it again (it goes on from there, or it is finished).
    if (outcome === "lost" || stopped()) continue;
    await store.winnerJobs.advanceSettingsWinnerJob(job.id, at.version, at.cursor, clock());
  }
}

/** How appendJobPages ended: the job's pages all done, moved by another process, or this run is to end. */
type JobOutcome = "done" | "lost" | "return";

/**
 * Appends a job's pages from `at` (moved on with each committed page, and counted in `run`) until
 * its last page, another process moving it, or the run's end (stopped, maxPages, a page busy).
 */
async function appendJobPages(
  deps: { store: Store; ranker: Ranker; clock: () => number },
  job: SettingsWinnerJob,
  at: { version: number; cursor: SettingsWinnerCursor },
  run: SettingsWinnerRun,
  opts: { pageSize?: number; maxPages: number; stopped: () => boolean },
): Promise<JobOutcome> {
  const { store, clock } = deps;
  // A deleted project's job has no one to tell: it is finished without events.
  if (!(await store.projects.findProjectById(job.projectId))) return "done";
  const pg = store.dialect === "postgres";
  const pages = winnerChangePages(deps, job.settingsBefore, job.settingsAfter, job.rankAt, {
    start: job.cursor,
    pageSize: opts.pageSize,
  });
  const iter = pages[Symbol.asyncIterator]();
  for (;;) {
    if (opts.stopped()) return "return";
    const from = at.version;
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
      if (!(await tx.winnerJobs.advanceSettingsWinnerJob(job.id, from, page.cursor, null)))
        return "lost" as const;
      if (events.length > 0) {
        await tx.changeLog.appendChangeEvents(events);
        await tx.changes?.publish(CHANGES_TOPIC);
      }
      return { cursor: page.cursor, events: events.length };
    });
    if (step === "busy") return "return";
    if (step === "done" || step === "lost") return step;
    at.version++;
    at.cursor = step.cursor;
    run.pages++;
    run.events += step.events;
    if (run.pages >= opts.maxPages) return "return";
  }
}

/**
 * Locks a job's row for this transaction (PostgreSQL): "held" when it is still at `pages`, "busy"
 * when another process holds the lock (it ranks this page), "lost" when it moved or finished.
 */
async function lockJob(tx: Store, id: number, pages: number): Promise<"held" | "busy" | "lost"> {
  const r = await sql<{ pages: number | string; finished_at: number | string | null }>`select pages,
    finished_at from settings_winner_jobs where id = ${id} for update skip locked`.execute(tx.accounts);
  const row = r.rows[0];
  if (!row) return "busy";
  return Number(row.pages) === pages && row.finished_at === null ? "held" : "lost";
}

/** How often finished jobs are pruned (every API process does; a prune finding nothing costs one query). */
const PRUNE_EVERY_MS = 10 * 60_000;

export interface SettingsWinnerRunnerOptions {
  store: Store;
  ranker: Ranker;
  logger: Pick<Logger, "warn" | "error">;
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
    this.loop = new PollLoop(() => this.tick(), o.pollMs ?? 100, o.logger, "settings winner.changed job");
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
      await this.o.store.winnerJobs.pruneSettingsWinnerJobs(now - this.o.retentionMs);
    }
    return runSettingsWinnerJobs(this.o, {
      stopped: () => this.loop.stopped,
      onFailure: ({ err, ...f }) => {
        if (f.failedAt !== null)
          this.o.logger.error({ err, ...f }, "settings winner.changed job gave up after its last attempt");
        else this.o.logger.warn({ err, ...f }, "settings winner.changed job page failed; retried later");
      },
    });
  }
}

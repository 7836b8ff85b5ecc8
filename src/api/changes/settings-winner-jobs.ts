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
 * and read the job again). A job's last page is followed by its `finished_at`. A process killed
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
    // A deleted project's job has no one to tell: it is finished without events.
    if (await store.findProjectById(job.projectId)) {
      const pages = winnerChangePages(deps, job.settingsBefore, job.settingsAfter, job.rankAt, {
        start: job.cursor,
        pageSize: opts.pageSize,
      });
      for await (const page of pages) {
        if (stopped()) return run;
        const events = page.changes.map((c) => settingsEvent(c, job.projectId, clock()));
        const from = version;
        const moved = await store.transaction(async (tx) => {
          if (!(await tx.advanceSettingsWinnerJob(job.id, from, page.cursor, null))) return false;
          if (events.length > 0) {
            await tx.appendChangeEvents(events);
            await tx.changes?.publish(CHANGES_TOPIC);
          }
          return true;
        });
        if (!moved) {
          lost = true;
          break;
        }
        version++;
        cursor = page.cursor;
        run.pages++;
        run.events += events.length;
        if (run.pages >= maxPages) return run;
      }
    }
    // Another process moved the job: read it again (it goes on from there, or it is finished).
    if (lost || stopped()) continue;
    await store.advanceSettingsWinnerJob(job.id, version, cursor, clock());
  }
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

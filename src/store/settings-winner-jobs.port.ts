/** Where a job has got to: `phase` of the affected names (settings-dry-run.ts) and the last name done in it. */
export interface SettingsWinnerCursor {
  phase: number;
  /** The last name done in `phase`; null: none yet. */
  name: string | null;
}

/** A settings change whose winner.changed events are still (or were) being appended. */
export interface SettingsWinnerJob {
  id: number;
  projectId: number;
  settingsBefore: Record<string, unknown>;
  settingsAfter: Record<string, unknown>;
  /** Epoch ms the names are ranked at (the time of the save). */
  rankAt: number;
  cursor: SettingsWinnerCursor;
  /** Pages done so far: the version `advanceSettingsWinnerJob` compares. */
  pages: number;
  createdAt: number;
  finishedAt: number | null;
  /** Pages that threw since the last one committed (failSettingsWinnerJob). */
  attempts: number;
  /** Epoch ms before which the job is not tried again; null: at once. */
  retryAt: number | null;
  /** The last failed page's error message. */
  lastError: string | null;
  /** Set (with finishedAt) when the job gave up. */
  failedAt: number | null;
}

/** A page of a job that threw: what failSettingsWinnerJob records. */
export interface SettingsWinnerFailure {
  error: string;
  /** When to try the page again; null when the job gives up. */
  retryAt: number | null;
  /** Epoch ms the job gave up (finished, failed); null while it will be retried. */
  failedAt: number | null;
}

/**
 * The jobs of settings changes (migration 0022): a save appends one in its transaction; the API
 * processes run them in id order, one page of names at a time, each page's events appended with a
 * conditional advance of the job, so that of several processes one appends a page.
 *
 * @example
 * await tx.appendSettingsWinnerJob({ projectId, settingsBefore, settingsAfter, rankAt: now, createdAt: now });
 * const job = await store.winnerJobs.findNextSettingsWinnerJob();
 * await store.transaction(async (tx) => {
 *   if (await tx.advanceSettingsWinnerJob(job.id, job.pages, cursor, null)) await tx.appendChangeEvents(events);
 * });
 */
export interface SettingsWinnerJobs {
  /** Appends a job (unfinished, cursor at the start); returns its id. */
  appendSettingsWinnerJob(job: {
    projectId: number;
    settingsBefore: Record<string, unknown>;
    settingsAfter: Record<string, unknown>;
    rankAt: number;
    createdAt: number;
  }): Promise<number>;
  /**
   * The unfinished job of lowest id that may run at `now`: not waiting for a retry, and no older
   * unfinished job of its project (a project's jobs run in order; other projects' go on). Without
   * `now`, the unfinished job of lowest id, retries or not.
   */
  findNextSettingsWinnerJob(now?: number): Promise<SettingsWinnerJob | null>;
  /**
   * Moves job `id` from `pages` pages done to `pages + 1`, to `cursor`, and finished at
   * `finishedAt` when it is given; only if it still is at `pages` and unfinished. True when it moved.
   * Clears the job's failed attempts.
   */
  advanceSettingsWinnerJob(
    id: number,
    pages: number,
    cursor: SettingsWinnerCursor,
    finishedAt: number | null,
  ): Promise<boolean>;
  /**
   * Counts a failed attempt of job `id` at `pages` pages done: records the error and the retry time,
   * or finishes the job as failed; only if it still is at `pages` and unfinished. True when recorded.
   */
  failSettingsWinnerJob(id: number, pages: number, failure: SettingsWinnerFailure): Promise<boolean>;
  /** Deletes the jobs finished before `before` (epoch ms); returns how many. */
  pruneSettingsWinnerJobs(before: number): Promise<number>;
}

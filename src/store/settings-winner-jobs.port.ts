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
}

/**
 * The jobs of settings changes (migration 0022): a save appends one in its transaction; the API
 * processes run them in id order, one page of names at a time, each page's events appended with a
 * conditional advance of the job, so that of several processes one appends a page.
 *
 * @example
 * await tx.appendSettingsWinnerJob({ projectId, settingsBefore, settingsAfter, rankAt: now, createdAt: now });
 * const job = await store.findNextSettingsWinnerJob();
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
  /** The unfinished job of lowest id, or null. */
  findNextSettingsWinnerJob(): Promise<SettingsWinnerJob | null>;
  /**
   * Moves job `id` from `pages` pages done to `pages + 1`, to `cursor`, and finished at
   * `finishedAt` when it is given; only if it still is at `pages` and unfinished. True when it moved.
   */
  advanceSettingsWinnerJob(
    id: number,
    pages: number,
    cursor: SettingsWinnerCursor,
    finishedAt: number | null,
  ): Promise<boolean>;
  /** Deletes the jobs finished before `before` (epoch ms); returns how many. */
  pruneSettingsWinnerJobs(before: number): Promise<number>;
}

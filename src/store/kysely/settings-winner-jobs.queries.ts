import { sql } from "kysely";
import type {
  SettingsWinnerCursor,
  SettingsWinnerFailure,
  SettingsWinnerJob,
} from "../settings-winner-jobs.port.js";
import type { Db } from "./rows.js";

const parse = (text: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

export async function appendSettingsWinnerJob(
  db: Db,
  job: {
    projectId: number;
    settingsBefore: Record<string, unknown>;
    settingsAfter: Record<string, unknown>;
    rankAt: number;
    createdAt: number;
  },
): Promise<number> {
  const r = await db
    .insertInto("settings_winner_jobs")
    .values({
      project_id: job.projectId,
      settings_before: JSON.stringify(job.settingsBefore),
      settings_after: JSON.stringify(job.settingsAfter),
      rank_at: job.rankAt,
      phase: 0,
      cursor_name: null,
      pages: 0,
      created_at: job.createdAt,
      finished_at: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(r.id);
}

export async function findNextSettingsWinnerJob(db: Db, now?: number): Promise<SettingsWinnerJob | null> {
  let q = db.selectFrom("settings_winner_jobs as j").selectAll().where("j.finished_at", "is", null);
  if (now !== undefined)
    q = q
      .where((eb) => eb.or([eb("j.retry_at", "is", null), eb("j.retry_at", "<=", now)]))
      .where(
        sql<boolean>`not exists (select 1 from settings_winner_jobs o where o.project_id = j.project_id
          and o.finished_at is null and o.id < j.id)`,
      );
  const r = await q.orderBy("j.id").limit(1).executeTakeFirst();
  if (!r) return null;
  return {
    id: Number(r.id),
    projectId: Number(r.project_id),
    settingsBefore: parse(r.settings_before),
    settingsAfter: parse(r.settings_after),
    rankAt: Number(r.rank_at),
    cursor: { phase: Number(r.phase), name: r.cursor_name },
    pages: Number(r.pages),
    createdAt: Number(r.created_at),
    finishedAt: r.finished_at === null ? null : Number(r.finished_at),
    attempts: Number(r.attempts),
    retryAt: r.retry_at === null ? null : Number(r.retry_at),
    lastError: r.last_error,
    failedAt: r.failed_at === null ? null : Number(r.failed_at),
  };
}

export async function advanceSettingsWinnerJob(
  db: Db,
  id: number,
  pages: number,
  cursor: SettingsWinnerCursor,
  finishedAt: number | null,
): Promise<boolean> {
  const r = await db
    .updateTable("settings_winner_jobs")
    .set({
      pages: pages + 1,
      phase: cursor.phase,
      cursor_name: cursor.name,
      finished_at: finishedAt,
      attempts: 0,
      retry_at: null,
      last_error: null,
    })
    .where("id", "=", id)
    .where("pages", "=", pages)
    .where("finished_at", "is", null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The longest error message kept (a stack or a huge message is cut). */
const MAX_ERROR_CHARS = 1000;

export async function failSettingsWinnerJob(
  db: Db,
  id: number,
  pages: number,
  failure: SettingsWinnerFailure,
): Promise<boolean> {
  const r = await db
    .updateTable("settings_winner_jobs")
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      retry_at: failure.retryAt,
      last_error: failure.error.slice(0, MAX_ERROR_CHARS),
      failed_at: failure.failedAt,
      finished_at: failure.failedAt,
    }))
    .where("id", "=", id)
    .where("pages", "=", pages)
    .where("finished_at", "is", null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function pruneSettingsWinnerJobs(db: Db, before: number): Promise<number> {
  const r = await db
    .deleteFrom("settings_winner_jobs")
    .where("finished_at", "is not", null)
    .where("finished_at", "<", before)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

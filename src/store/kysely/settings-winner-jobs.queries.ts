import type { SettingsWinnerCursor, SettingsWinnerJob } from "../settings-winner-jobs.port.js";
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

export async function findNextSettingsWinnerJob(db: Db): Promise<SettingsWinnerJob | null> {
  const r = await db
    .selectFrom("settings_winner_jobs")
    .selectAll()
    .where("finished_at", "is", null)
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
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
    .set({ pages: pages + 1, phase: cursor.phase, cursor_name: cursor.name, finished_at: finishedAt })
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

import type { ChangeEventWrite } from "../domain/change-events.js";
import type { Ranker } from "../scoring/scoring-ranker.js";
import type { Store } from "../store/store.js";
import { refOf, winnerEvent } from "../scoring/winner-events.js";
import { winnerChanges } from "./settings-dry-run.js";

/**
 * The winner.changed events of a project's settings change (docs/api.md, "Change feed"): one per
 * colliding name whose winner differs, for this project only, with no block (`cause: settings`).
 * Appended in the transaction that saves the settings.
 */
export async function settingsWinnerEvents(
  deps: { store: Store; ranker: Ranker },
  projectId: number,
  current: Record<string, unknown>,
  next: Record<string, unknown>,
  now: number,
): Promise<ChangeEventWrite[]> {
  const out: ChangeEventWrite[] = [];
  for await (const batch of winnerChanges(deps, current, next, now))
    for (const { name, before, after } of batch) {
      const from = refOf(before?.domain);
      const to = refOf(after?.domain);
      const tld = name.slice(name.lastIndexOf(".") + 1);
      out.push(winnerEvent(name, tld, from, to, projectId, null, now));
    }
  return out;
}

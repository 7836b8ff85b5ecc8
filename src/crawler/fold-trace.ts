import type { JournalEvent } from "./journal-event.js";

/**
 * Which event set what, filled by `foldToken` when asked (the API's provenance): the owner's
 * event, and per emitting contract the event of each native record in force.
 */
export interface FoldTrace {
  owner: JournalEvent | null;
  natives: Map<string, Map<string, JournalEvent>>;
}

export function traceRecord(trace: FoldTrace, e: JournalEvent, nativeKey: string): void {
  let m = trace.natives.get(e.contract);
  if (!m) {
    m = new Map();
    trace.natives.set(e.contract, m);
  }
  m.set(nativeKey, e);
}

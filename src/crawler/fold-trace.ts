import type { JournalEvent, TokenState } from "./projection.js";

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

/** The event that set a native record in force in `s` (the current resolver's, when it has one). */
export function recordEventOf(s: TokenState, trace: FoldTrace, nativeKey: string): JournalEvent | null {
  if (s.resolver !== undefined)
    return s.resolver === null ? null : (trace.natives.get(s.resolver)?.get(nativeKey) ?? null);
  // Without resolvers every contract's records count and the last contract's win (effectiveNatives).
  let found: JournalEvent | null = null;
  for (const [contract, m] of s.natives)
    if (m.has(nativeKey)) found = trace.natives.get(contract)?.get(nativeKey) ?? found;
  return found;
}

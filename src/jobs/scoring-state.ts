import { createHash } from "node:crypto";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { ScoringFacts } from "../scoring/scoring-index.js";
import type { ScoringLists } from "../scoring/scoring-lists.js";
import type { TldOrigin } from "../scoring/scoring.types.js";
import type { ScoringData } from "../store/scoring-data.port.js";

/**
 * The version of the base rules' logic. Bump it in the change that alters what a rule computes
 * (docs/scoring.md, "Rescoring"): the next pass of every running omniname then rescores the whole
 * map once, as it does when the operator's lists change.
 */
export const SCORING_RULES_VERSION = 1;

const LISTS_KEY = "lists";
const FACTS_KEY = "facts";

/**
 * What the stored signals depend on besides the map: the rules' version and the operator's file
 * lists (CSAM terms, spam blocklist, ICANN TLDs). The KYC list is not in it: `kyc import` rescores
 * the owners it changes itself.
 */
export function listsFingerprint(lists: ScoringLists): string {
  const sorted = (xs: Iterable<string>) => [...xs].sort();
  return createHash("sha256")
    .update(
      JSON.stringify({
        rules: SCORING_RULES_VERSION,
        csam: sorted(lists.csamTerms),
        blockedNames: sorted(lists.blocklist.names),
        blockedTlds: sorted(lists.blocklist.tlds),
        icann: sorted(lists.icannTlds),
      }),
    )
    .digest("hex");
}

/** Records what a pass scored with (the lists' fingerprint and the facts). */
export async function saveScoringState(
  store: Pick<ScoringData, "setScoringState">,
  lists: ScoringLists,
  facts: ScoringFacts,
): Promise<void> {
  await store.setScoringState(
    FACTS_KEY,
    JSON.stringify({ tldOrigins: [...facts.tldOrigins], imitated: [...facts.imitated] }),
  );
  await store.setScoringState(LISTS_KEY, listsFingerprint(lists));
}

export interface ScoringState {
  fingerprint: string | null;
  /** The facts of the last pass; `null` when none was recorded or it does not parse. */
  facts: ScoringFacts | null;
}

export async function loadScoringState(store: Pick<ScoringData, "findScoringState">): Promise<ScoringState> {
  const fingerprint = await store.findScoringState(LISTS_KEY);
  const text = await store.findScoringState(FACTS_KEY);
  return { fingerprint, facts: text === null ? null : parseFacts(text) };
}

function parseFacts(text: string): ScoringFacts | null {
  try {
    const raw = JSON.parse(text) as {
      tldOrigins: Array<[string, { provider: Provider; network: Network; registeredAt: number | null }]>;
      imitated: Array<[string, string]>;
    };
    if (!Array.isArray(raw.tldOrigins) || !Array.isArray(raw.imitated)) return null;
    return { tldOrigins: new Map<string, TldOrigin>(raw.tldOrigins), imitated: new Map(raw.imitated) };
  } catch {
    return null;
  }
}

import { loadScoringLists, type ScoringFilesConfig } from "../scoring/scoring-lists.js";
import type { KycImportResult } from "../store/scoring-data.port.js";
import { buildScoringIndex, type RescoreStats, type RescoreStore, rescoreDomains } from "./rescore.job.js";

/**
 * Imports a KYC list (parsed by `parseKycFile`) and rescores only the domains of the owners it
 * added or removed, with the lists as they now stand and fresh facts, in pages (rescore.job.ts).
 *
 * @example
 * const { added, rescored } = await importKycList(store, config, parseKycFile(text), { replace: true });
 */
export async function importKycList(
  store: RescoreStore,
  config: ScoringFilesConfig,
  addresses: readonly string[],
  opts: { replace?: boolean; source?: string } = {},
): Promise<KycImportResult & { rescored: RescoreStats }> {
  const result = await store.scoring.importKycAddresses(addresses, opts);
  const lists = await loadScoringLists(config, await store.scoring.findKycOwners());
  const facts = await buildScoringIndex(store, lists);
  const ids = await store.scoring.findDomainIdsByOwners([...result.added, ...result.removed]);
  const rescored = await rescoreDomains(store, ids, lists, facts);
  return { ...result, rescored };
}

import type { Logger } from "pino";
import type { AppContext } from "./app-context.js";
import type { Config } from "./config/config.schema.js";
import { dataDirSecret } from "./config/data-dir-secret.js";
import { secretFragmentsOf } from "./config/redact.js";
import { createLogger } from "./logger.js";
import { createScoringRanker } from "./scoring/scoring-ranker.js";
import type { GeoBlockedWords } from "./scoring/geography.js";
import { loadScoringLists, type ScoringLists } from "./scoring/scoring-lists.js";
import { createStore, type StoreTuning } from "./store/create-store.js";

export interface RuntimeContext extends AppContext {
  /** The operator's scoring lists (CSAM terms, blocklist, ICANN TLDs, KYC, geography). */
  scoringLists: ScoringLists & { geoBlockedWords: GeoBlockedWords };
}

/** Builds the context every role shares: the only place a store and a logger are created. */
export async function createContext(
  config: Config,
  logger?: Logger,
  storeOptions?: StoreTuning,
): Promise<RuntimeContext> {
  const log =
    logger ??
    createLogger(config.logLevel, undefined, secretFragmentsOf(config as unknown as Record<string, unknown>));
  const store = await createStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    ...storeOptions,
  });
  const scoringLists = await loadScoringLists(config, await store.scoring.findKycOwners());
  return {
    config,
    logger: log,
    store,
    scoringLists,
    ranker: createScoringRanker({ geoBlockedWords: scoringLists.geoBlockedWords }),
    pepper: config.apiKeyPepper ?? dataDirSecret(config.dataDir, "pepper"),
    clock: Date.now,
  };
}

import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { AppContext } from "./app-context.js";
import type { Config } from "./config/config.schema.js";
import { createLogger } from "./logger.js";
import { createScoringRanker } from "./scoring/scoring-ranker.js";
import type { GeoBlockedWords } from "./scoring/geography.js";
import { loadScoringLists, type ScoringLists } from "./scoring/scoring-lists.js";
import { createStore } from "./store/create-store.js";

/** Reads a secret kept in DATA_DIR, creating it (mode 0600) on first use. */
export function dataDirSecret(dataDir: string, file: string, bytes = 32): string {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, file);
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBytes(bytes).toString("base64url");
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return secret;
}

export interface RuntimeContext extends AppContext {
  /** The operator's scoring lists (CSAM terms, blocklist, ICANN TLDs, KYC, geography). */
  scoringLists: ScoringLists & { geoBlockedWords: GeoBlockedWords };
}

/** Builds the context every role shares: the only place a store and a logger are created. */
export async function createContext(config: Config, logger?: Logger): Promise<RuntimeContext> {
  const log = logger ?? createLogger(config.logLevel);
  const store = await createStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const scoringLists = await loadScoringLists(config, await store.findKycOwners());
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

import type { Logger } from "pino";
import type { Config } from "./config/config.schema.js";
import type { Ranker } from "./scoring/scoring-ranker.js";
import type { Store } from "./store/store.js";

/**
 * Everything a role needs, built once in main.ts (or a test) and passed down: no global
 * singletons. Features add fields here as they land.
 */
export interface AppContext {
  config: Config;
  logger: Logger;
  store: Store;
  ranker: Ranker;
  /** Secret key of the API-key HMAC (config API_KEY_PEPPER or DATA_DIR/pepper). */
  pepper: string;
  clock: () => number;
}

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureWorld, fixtureBaseTime } from "../../../src/devnet/fixtures.js";
import { parseGeoBlockedWords } from "../../../src/scoring/geography.js";
import { loadIcannTlds } from "../../../src/scoring/iana-tlds.js";
import { rescoreAll } from "../../../src/jobs/rescore.job.js";
import type { ScoringLists } from "../../../src/scoring/scoring-lists.js";
import { createStore } from "../../../src/store/create-store.js";
import type { Store } from "../../../src/store/store.js";
import { TEST_CSAM_TERMS } from "./scoring-fixtures.js";
import { type SeedDomain, seedDomains } from "./seed-fixtures.js";

const DAY = 24 * 3600 * 1000;
/** A year after the fixture epoch: expired names are past their grace period, the others live. */
export const SCENARIO_NOW = fixtureBaseTime() + 365 * DAY;

/** Made-up, neutral signals for the scenarios: a CSAM-failing name and an owner of it. */
export const CSAM_NAME = "zzforbiddenzz.wallet";
export const CSAM_OWNER = "0x00000000000000000000000000000000000c5a11";
export const BLOCKLISTED = "traded.nft";
/** "moon" is blocked for callers from DE only: moon.wallet collides across two providers. */
export const GEO_WORDS = parseGeoBlockedWords(JSON.stringify({ DE: ["moon"] }));

const EXTRA: SeedDomain[] = [
  {
    provider: "NAMESPACE_A",
    network: "POLYGON",
    name: CSAM_NAME,
    owner: CSAM_OWNER,
    records: [["token.ETH.0", CSAM_OWNER]],
    registeredAt: fixtureBaseTime() + 300 * DAY,
    expiresAt: null,
    reverse: true,
  },
];

/** Every project setting the scenario and consistency tests use. */
export const SCENARIO_SETTINGS: Record<string, Record<string, unknown>> = {
  none: {},
  domainException: { exceptions: [{ domain: "alice.wallet", provider: "NAMESPACE_B" }] },
  tldException: { exceptions: [{ tld: "x", provider: "NAMESPACE_A" }] },
  networkException: { exceptions: [{ domain: "bob.x", provider: "NAMESPACE_A", network: "BSC" }] },
  disabledProvider: { providers: { disabled: ["NAMESPACE_A"] } },
  disabledNetwork: { networks: { disabled: ["ETHEREUM"] } },
  enabledOnly: { providers: { enabled: ["NAMESPACE_C"] } },
  priority: { providerPriority: ["NAMESPACE_B"] },
  priorityList: { providerPriority: ["NAMESPACE_C", "NAMESPACE_A", "NAMESPACE_B"] },
  includeExpired: { includeExpired: true },
  everything: {
    providers: { disabled: ["NAMESPACE_C"] },
    providerPriority: ["NAMESPACE_B"],
    exceptions: [
      { tld: "wallet", provider: "NAMESPACE_A" },
      { domain: "moon.wallet", provider: "NAMESPACE_B" },
    ],
    includeExpired: true,
  },
};

export interface ScenarioWorld {
  store: Store;
  lists: ScoringLists;
  ids: Map<string, number>;
  close(): Promise<void>;
}

/** The fixture world (plus a CSAM-failing name) in a SQLite store, scored by rescoreAll. */
export async function createScenarioWorld(): Promise<ScenarioWorld> {
  const dir = mkdtempSync(join(tmpdir(), "omniname-scoring-"));
  const store = await createStore({ dataDir: dir });
  const ids = await seedDomains(store, [...fixtureWorld().domains, ...EXTRA]);
  await store.scoring.importKycAddresses([fixtureWorld().owners.alice]);
  const lists: ScoringLists = {
    csamTerms: [...TEST_CSAM_TERMS],
    blocklist: { names: new Set([BLOCKLISTED]), tlds: new Set() },
    kycOwners: await store.scoring.findKycOwners(),
    icannTlds: loadIcannTlds({}),
  };
  await rescoreAll(store, lists);
  return {
    store,
    lists,
    ids,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

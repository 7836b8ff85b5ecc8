import { splitName } from "../../../src/domain/names.js";
import type { Network } from "../../../src/domain/networks.js";
import type { Provider } from "../../../src/domain/providers.js";
import type { DomainRecord, DomainWithRecords } from "../../../src/domain/types.js";
import type { BaseSignalsContext } from "../../../src/scoring/scoring.types.js";

/** A neutral, made-up CSAM term list for tests: no real term ever appears in the test suite. */
export const TEST_CSAM_TERMS = ["zzforbiddenzz", "qqbannedqq"] as const;

const T0 = Date.UTC(2024, 0, 1);
let nextId = 1;

export function record(key: string, value: string): DomainRecord {
  return { key, value, nativeKey: key, nativeValue: value };
}

/** A stored-looking domain with sensible defaults; `name` decides sld and tld. */
export function domain(
  over: Partial<DomainWithRecords> & { name?: string; provider?: Provider; network?: Network } = {},
): DomainWithRecords {
  // Not normalized on purpose: the rules must cope with whatever a writer stores.
  const name = over.name ?? "alice.wallet";
  const { sld, tld } = splitName(name);
  return {
    id: nextId++,
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: `0x${"0".repeat(63)}1`,
    sld,
    tld,
    owner: "0x00000000000000000000000000000000000000aa",
    contractAddress: "0x00000000000000000000000000000000000000cc",
    resolver: null,
    registeredAt: T0,
    registeredBlock: 1,
    expiresAt: null,
    lastUpdateBlock: 1,
    lastUpdateAt: T0,
    baseScore: 50,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
    records: [],
    ...over,
    name,
  };
}

export function baseContext(over: Partial<BaseSignalsContext> = {}): BaseSignalsContext {
  return {
    csamTerms: [],
    blocklist: { names: new Set(), tlds: new Set() },
    kycOwners: new Set(),
    icannTlds: new Set(["com", "org"]),
    tldOrigin: () => null,
    ...over,
  };
}

export const DAY = 24 * 3600 * 1000;
export { T0 };

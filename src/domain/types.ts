import type { Network } from "./networks.js";
import type { Provider } from "./providers.js";

/** One record of a domain: the canonical key/value and the native key/value it was mapped from. */
export interface DomainRecord {
  key: string;
  value: string;
  nativeKey: string;
  nativeValue: string;
}

/** A domain as the store holds it. Addresses are lower case; times are epoch milliseconds. */
export interface Domain {
  id: number;
  provider: Provider;
  network: Network;
  /** 0x-prefixed, 64 hex digits, lower case: namehash (ENS, UNS) or the Freename token id. */
  tokenId: string;
  /** Normalized Unicode name (see domain/names.ts). ENS labels never seen in plaintext read `[<hash>]`. */
  name: string;
  sld: string;
  tld: string;
  owner: string;
  contractAddress: string;
  resolver: string | null;
  registeredAt: number | null;
  registeredBlock: number | null;
  expiresAt: number | null;
  lastUpdateBlock: number;
  lastUpdateAt: number;
  /** Base score 0..100 computed when the domain is written (scoring/). */
  baseScore: number;
  spam: boolean;
  csamOk: boolean;
  kyc: boolean;
  tags: string[];
}

export type DomainWrite = Omit<Domain, "id">;

export interface DomainWithRecords extends Domain {
  records: DomainRecord[];
}

export interface ReverseRecord {
  network: Network;
  provider: Provider;
  address: string;
  domainId: number;
}

export interface DomainFilter {
  network?: Network | undefined;
  provider?: Provider | undefined;
}

/** Whether a domain (or a reverse record) passes a network/provider filter; an empty filter passes all. */
export function matchesFilter(d: { network: string; provider: string }, filter: DomainFilter): boolean {
  return (
    (!filter.network || d.network === filter.network) && (!filter.provider || d.provider === filter.provider)
  );
}

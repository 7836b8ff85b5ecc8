import * as bonfida from "@bonfida/spl-name-service";
import type { Connection, PublicKey } from "@solana/web3.js";

/**
 * Bonfida's `@bonfida/spl-name-service` 3.0.26, typed for the functions the judges call. Its
 * declaration files import their neighbours without extensions, which TypeScript's `nodenext`
 * resolution cannot follow (every export reads as missing), so the few signatures used here are
 * restated from its `dist/esm/*.d.ts`; the values are the package's own.
 */
export interface SnsSdk {
  NameRegistryState: {
    retrieve(
      c: Connection,
      key: PublicKey,
    ): Promise<{
      registry: { owner: PublicKey; parentName: PublicKey; class: PublicKey; data?: Buffer };
      nftOwner: PublicKey | null;
    }>;
  };
  Record: Record<string, string>;
  getDomainKeySync(name: string, version?: number): { pubkey: PublicKey; parent?: PublicKey; isSub: boolean };
  reverseLookup(c: Connection, key: PublicKey, parent?: PublicKey): Promise<string>;
  resolve(c: Connection, name: string): Promise<PublicKey>;
  getRecordV2(
    c: Connection,
    domain: string,
    record: string,
    o?: { deserialize?: boolean },
  ): Promise<{ deserializedContent?: string; verified: { staleness: boolean; roa?: boolean } }>;
  getRecord(c: Connection, domain: string, record: string, deserialize: true): Promise<string | undefined>;
  getPrimaryDomain(
    c: Connection,
    wallet: PublicKey,
  ): Promise<{ domain: PublicKey; reverse: string; stale: boolean }>;
  getAllDomains(c: Connection, wallet: PublicKey): Promise<PublicKey[]>;
}

export const sns = bonfida as unknown as SnsSdk;

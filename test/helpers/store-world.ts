import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DomainWrite } from "../../src/domain/types.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "./pg.js";

export const ALICE = "0x00000000000000000000000000000000000a11ce";
export const BOB = "0x0000000000000000000000000000000000000b0b";

/** A 0x-prefixed, 64-hex-digit token id from a small number. */
export const tokenIdOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

/** A complete domain write (alice.wallet on FNS/Polygon) with any field overridden. */
export function testDomain(over: Partial<DomainWrite> = {}): DomainWrite {
  return {
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: tokenIdOf(1),
    name: "alice.wallet",
    sld: "alice",
    tld: "wallet",
    owner: ALICE,
    contractAddress: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
    resolver: null,
    registeredAt: 1_700_000_000_000,
    registeredBlock: 10,
    expiresAt: null,
    lastUpdateBlock: 10,
    lastUpdateAt: 1_700_000_000_000,
    baseScore: 50,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
    ...over,
  };
}

interface OpenedStore {
  store: Store;
  /** Another store on the same database: a second process's connection. */
  second: () => Promise<Store>;
  cleanup: () => Promise<void>;
}

/** Both real backends, each opened fresh: loop a suite over them with `describe.each`. */
export const STORE_BACKENDS: Array<{ name: string; open: () => Promise<OpenedStore> }> = [
  {
    name: "sqlite",
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), "omniname-store-"));
      const store = await createStore({ dataDir: dir });
      return {
        store,
        second: () => createStore({ dataDir: dir }),
        cleanup: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "postgres",
    open: async () => {
      const db = await createTestDatabase();
      const store = await createStore({ databaseUrl: db.url, dataDir: "/nonexistent" });
      return {
        store,
        second: () => createStore({ databaseUrl: db.url, dataDir: "/nonexistent" }),
        cleanup: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
  },
];

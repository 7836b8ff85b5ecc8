import { createRequire } from "node:module";
import { type Address, getAddressCodec } from "@solana/kit";

/**
 * LiteSVM's native binding (package `litesvm-linux-x64-gnu`), used directly: the `litesvm` wrapper
 * package lists six platform packages of which the registry here holds only this one, so its lock
 * file entry cannot satisfy `npm ci` (as with anvil: package.json names `@foundry-rs/anvil-linux-amd64`
 * itself). The few methods the devnet uses, typed from the binding's own declarations; addresses go
 * in and out as 32 bytes.
 */
interface NativeAccount {
  lamports(): bigint;
  data(): Uint8Array;
  owner(): Uint8Array;
}
interface NativeLiteSvm {
  getAccount(address: Uint8Array): NativeAccount | null;
  getProgramAccounts(program: Uint8Array): Array<{ address: Uint8Array; account(): NativeAccount }>;
  setAccount(address: Uint8Array, account: NativeAccount): void;
  warpToSlot(slot: bigint): void;
  minimumBalanceForRentExemption(dataLength: bigint): bigint;
  latestBlockhash(): string;
}
interface LiteSvmBinding {
  LiteSvm: new () => NativeLiteSvm;
  Account: new (
    lamports: bigint,
    data: Uint8Array,
    owner: Uint8Array,
    executable: boolean,
    rentEpoch: bigint,
  ) => NativeAccount;
}
const loadLiteSvm = (): LiteSvmBinding =>
  createRequire(import.meta.url)("litesvm-linux-x64-gnu") as LiteSvmBinding;

/** One account as the devnet's Solana holds it. */
export interface LedgerAccount {
  address: Address;
  /** The program that owns the account. */
  owner: Address;
  data: Uint8Array;
  lamports: bigint;
}

/** A change of accounts at a slot, for the endpoint's `programSubscribe` notifications. */
export type LedgerListener = (
  slot: number,
  accounts: ReadonlyArray<LedgerAccount & { exists: boolean }>,
) => void;

const SYSTEM_PROGRAM = "11111111111111111111111111111111" as Address;

/**
 * The devnet's Solana state: accounts held in LiteSVM, written in slots. There is no SNS program
 * binary to run (docs/sns.md), so the devnet writes the program's accounts directly, one slot per
 * `commit`; every slot is final at once (the devnet's `confirmed` and `finalized` are the same).
 *
 * @example const l = createSolanaLedger(); l.write([{ address, owner, data, lamports: 1n }]);
 */
export interface SolanaLedger {
  /** What getGenesisHash answers: tells this ledger from another devnet's on the same port. */
  genesisHash(): string;
  /** The latest blockhash of the ledger (getLatestBlockhash). */
  latestBlockhash(): string;
  slot(): number;
  get(address: Address): LedgerAccount | null;
  /** The accounts owned by `program`. */
  programAccounts(program: Address): LedgerAccount[];
  /** Writes (data set) or closes (`data: null`) accounts in one new slot; returns the slot. */
  write(changes: ReadonlyArray<{ address: Address; owner: Address; data: Uint8Array | null }>): number;
  onChange(listener: LedgerListener): () => void;
  /** Every account written and not closed since the ledger was created or restored (the state to save). */
  accounts(): LedgerAccount[];
}

/** What a ledger starts from: a saved ledger's slot, genesis hash and accounts (solana-devnet.ts). */
export interface LedgerState {
  slot: number;
  genesisHash: string;
  accounts: ReadonlyArray<LedgerAccount>;
}

const DEFAULT_GENESIS_HASH = "omninameSolanaDevnet1111111111111111111111";

export function createSolanaLedger(from?: LedgerState): SolanaLedger {
  const { LiteSvm, Account } = loadLiteSvm();
  const codec = getAddressCodec();
  const svm = new LiteSvm();
  let slot = from?.slot ?? 1;
  svm.warpToSlot(BigInt(slot));
  const genesisHash = from?.genesisHash ?? DEFAULT_GENESIS_HASH;
  // The addresses ever written: LiteSVM lists accounts per program only.
  const written = new Set<Address>();
  for (const a of from?.accounts ?? []) {
    svm.setAccount(
      codec.encode(a.address) as Uint8Array,
      new Account(a.lamports, a.data, codec.encode(a.owner) as Uint8Array, false, 0n),
    );
    written.add(a.address);
  }
  const listeners = new Set<LedgerListener>();
  const read = (address: Address, a: NativeAccount): LedgerAccount => ({
    address,
    owner: codec.decode(a.owner()),
    data: a.data(),
    lamports: a.lamports(),
  });
  const get = (address: Address): LedgerAccount | null => {
    const a = svm.getAccount(codec.encode(address) as Uint8Array);
    return a === null ? null : read(address, a);
  };
  return {
    genesisHash: () => genesisHash,
    latestBlockhash: () => svm.latestBlockhash(),
    slot: () => slot,
    get,
    accounts() {
      const out: LedgerAccount[] = [];
      for (const address of written) {
        const a = get(address);
        if (a && a.lamports > 0n) out.push(a);
      }
      return out;
    },
    programAccounts(program) {
      return svm
        .getProgramAccounts(codec.encode(program) as Uint8Array)
        .map((x) => read(codec.decode(x.address), x.account()));
    },
    write(changes) {
      slot += 1;
      svm.warpToSlot(BigInt(slot));
      const changed: Array<LedgerAccount & { exists: boolean }> = [];
      for (const c of changes) {
        const data = c.data ?? new Uint8Array(0);
        // A closed account has no lamports: Solana (and LiteSVM) then treat it as absent.
        const lamports = c.data === null ? 0n : svm.minimumBalanceForRentExemption(BigInt(data.length));
        const owner = c.data === null ? SYSTEM_PROGRAM : c.owner;
        svm.setAccount(
          codec.encode(c.address) as Uint8Array,
          new Account(lamports, data, codec.encode(owner) as Uint8Array, false, 0n),
        );
        changed.push({ address: c.address, owner: c.owner, data, lamports, exists: c.data !== null });
        written.add(c.address);
      }
      for (const l of listeners) l(slot, changed);
      return slot;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

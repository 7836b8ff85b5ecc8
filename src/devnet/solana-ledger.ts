import type { Address } from "@solana/kit";
import { LiteSVM } from "litesvm";

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
  readonly svm: LiteSVM;
  slot(): number;
  get(address: Address): LedgerAccount | null;
  /** The accounts owned by `program`. */
  programAccounts(program: Address): LedgerAccount[];
  /** Writes (data set) or closes (`data: null`) accounts in one new slot; returns the slot. */
  write(changes: ReadonlyArray<{ address: Address; owner: Address; data: Uint8Array | null }>): number;
  onChange(listener: LedgerListener): () => void;
}

export function createSolanaLedger(): SolanaLedger {
  const svm = new LiteSVM();
  let slot = 1;
  svm.warpToSlot(BigInt(slot));
  const listeners = new Set<LedgerListener>();
  const read = (a: {
    address: Address;
    programAddress: Address;
    data: Uint8Array | ArrayLike<number>;
    lamports: bigint;
  }): LedgerAccount => ({
    address: a.address,
    owner: a.programAddress,
    data: a.data instanceof Uint8Array ? a.data : Uint8Array.from(a.data),
    lamports: a.lamports,
  });
  return {
    svm,
    slot: () => slot,
    get(address) {
      const a = svm.getAccount(address);
      return a.exists ? read(a) : null;
    },
    programAccounts(program) {
      return svm.getProgramAccounts(program).map(read);
    },
    write(changes) {
      slot += 1;
      svm.warpToSlot(BigInt(slot));
      const written: Array<LedgerAccount & { exists: boolean }> = [];
      for (const c of changes) {
        const data = c.data ?? new Uint8Array(0);
        // A closed account has no lamports: Solana (and LiteSVM) then treat it as absent.
        const lamports = c.data === null ? 0n : svm.minimumBalanceForRentExemption(BigInt(data.length));
        svm.setAccount({
          address: c.address,
          data,
          executable: false,
          lamports: lamports as never,
          programAddress: c.data === null ? SYSTEM_PROGRAM : c.owner,
          space: BigInt(data.length),
        });
        written.push({ address: c.address, owner: c.owner, data, lamports, exists: c.data !== null });
      }
      for (const l of listeners) l(slot, written);
      return slot;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

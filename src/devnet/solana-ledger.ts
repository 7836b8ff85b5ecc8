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
 * Solana's commitment levels as the devnet keeps them: `processed` and `confirmed` are the newest
 * slot (one validator: what it processed is voted on at once), `finalized` lags `finalityLag` slots.
 */
export type LedgerCommitment = "processed" | "confirmed" | "finalized";

/**
 * The devnet's Solana state: accounts held in LiteSVM, written in slots. There is no SNS program
 * binary to run (docs/sns.md), so the devnet writes the program's accounts directly, one slot per
 * `write`. A slot is confirmed when written and finalized `finalityLag` slots later (default 0:
 * final at once); until then `dropUnfinalized` can abandon it, as a fork the cluster drops. Reads
 * take a commitment (default `confirmed`: the newest state), as Solana's RPC does.
 *
 * @example const l = createSolanaLedger(); l.write([{ address, owner, data, lamports: 1n }]);
 */
export interface SolanaLedger {
  /** What getGenesisHash answers: tells this ledger from another devnet's on the same port. */
  genesisHash(): string;
  /** The latest blockhash of the ledger (getLatestBlockhash). */
  latestBlockhash(): string;
  /** The newest slot (`confirmed`), or the newest finalized one. */
  slot(commitment?: LedgerCommitment): number;
  /** Changes with every write, advance and drop: what a cache of reads is keyed by. */
  version(): number;
  get(address: Address, commitment?: LedgerCommitment): LedgerAccount | null;
  /** The accounts owned by `program`. */
  programAccounts(program: Address, commitment?: LedgerCommitment): LedgerAccount[];
  /** Writes (data set) or closes (`data: null`) accounts in one new slot; returns the slot. */
  write(changes: ReadonlyArray<{ address: Address; owner: Address; data: Uint8Array | null }>): number;
  /** `slots` empty slots (time passing), finalizing what falls `finalityLag` behind; returns the newest slot. */
  advance(slots: number): number;
  /**
   * Abandons every slot not yet finalized, as a fork the cluster drops: their writes are undone
   * (the newest state is the finalized one again); slot numbers go on from the newest (Solana
   * skips the dropped slots). Returns the dropped slots that had writes.
   */
  dropUnfinalized(): number[];
  /**
   * Listens to writes: at `confirmed` (default) when a slot is written, at `finalized` when it is
   * finalized (the slot's accounts as that slot left them). A dropped slot is never finalized.
   */
  onChange(listener: LedgerListener, commitment?: LedgerCommitment): () => void;
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

/** One written slot not finalized yet: its accounts before and after the write. */
interface PendingSlot {
  slot: number;
  before: Map<Address, LedgerAccount | null>;
  after: Array<LedgerAccount & { exists: boolean }>;
}

export function createSolanaLedger(from?: LedgerState, opts: { finalityLag?: number } = {}): SolanaLedger {
  const lag = opts.finalityLag ?? 0;
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
  const listeners = { confirmed: new Set<LedgerListener>(), finalized: new Set<LedgerListener>() };
  let finalized = slot;
  let version = 0;
  /** Written slots above `finalized`, oldest first. */
  let pending: PendingSlot[] = [];
  /** What a `finalized` read sees instead of the newest state: each address's account before its first pending write. */
  const finalOverlay = (): Map<Address, LedgerAccount | null> => {
    const out = new Map<Address, LedgerAccount | null>();
    for (const p of pending) for (const [a, v] of p.before) if (!out.has(a)) out.set(a, v);
    return out;
  };
  const put = (address: Address, a: LedgerAccount | null, ownerIfClosed: Address = SYSTEM_PROGRAM) => {
    svm.setAccount(
      codec.encode(address) as Uint8Array,
      a === null
        ? new Account(0n, new Uint8Array(0), codec.encode(ownerIfClosed) as Uint8Array, false, 0n)
        : new Account(a.lamports, a.data, codec.encode(a.owner) as Uint8Array, false, 0n),
    );
  };
  const finalize = () => {
    while (pending.length > 0 && pending[0].slot <= slot - lag) {
      const p = pending.shift() as PendingSlot;
      finalized = p.slot;
      for (const l of listeners.finalized) l(p.slot, p.after);
    }
    finalized = Math.max(finalized, slot - lag);
  };
  const read = (address: Address, a: NativeAccount): LedgerAccount => ({
    address,
    owner: codec.decode(a.owner()),
    data: a.data(),
    lamports: a.lamports(),
  });
  const newest = (address: Address): LedgerAccount | null => {
    const a = svm.getAccount(codec.encode(address) as Uint8Array);
    return a === null || a.lamports() === 0n ? null : read(address, a);
  };
  const get = (address: Address, commitment: LedgerCommitment = "confirmed"): LedgerAccount | null => {
    if (commitment === "finalized" && pending.length > 0) {
      const overlay = finalOverlay();
      if (overlay.has(address)) return overlay.get(address) ?? null;
    }
    return newest(address);
  };
  return {
    genesisHash: () => genesisHash,
    latestBlockhash: () => svm.latestBlockhash(),
    slot: (commitment = "confirmed") => (commitment === "finalized" ? finalized : slot),
    version: () => version,
    get,
    accounts() {
      const out: LedgerAccount[] = [];
      for (const address of written) {
        const a = get(address);
        if (a && a.lamports > 0n) out.push(a);
      }
      return out;
    },
    programAccounts(program, commitment = "confirmed") {
      const now = svm
        .getProgramAccounts(codec.encode(program) as Uint8Array)
        .map((x) => read(codec.decode(x.address), x.account()))
        .filter((a) => a.lamports > 0n);
      if (commitment !== "finalized" || pending.length === 0) return now;
      const overlay = finalOverlay();
      const out = now.filter((a) => !overlay.has(a.address));
      for (const a of overlay.values()) if (a !== null && a.owner === program) out.push(a);
      return out;
    },
    write(changes) {
      slot += 1;
      version += 1;
      svm.warpToSlot(BigInt(slot));
      const changed: Array<LedgerAccount & { exists: boolean }> = [];
      const before = new Map<Address, LedgerAccount | null>();
      for (const c of changes) {
        if (!before.has(c.address)) before.set(c.address, newest(c.address));
        const data = c.data ?? new Uint8Array(0);
        // A closed account has no lamports: Solana (and LiteSVM) then treat it as absent.
        const lamports = c.data === null ? 0n : svm.minimumBalanceForRentExemption(BigInt(data.length));
        const owner = c.data === null ? SYSTEM_PROGRAM : c.owner;
        put(c.address, c.data === null ? null : { address: c.address, owner, data, lamports });
        changed.push({ address: c.address, owner: c.owner, data, lamports, exists: c.data !== null });
        written.add(c.address);
      }
      pending.push({ slot, before, after: changed });
      for (const l of listeners.confirmed) l(slot, changed);
      finalize();
      return slot;
    },
    advance(slots) {
      slot += Math.max(0, Math.floor(slots));
      version += 1;
      svm.warpToSlot(BigInt(slot));
      for (const l of listeners.confirmed) l(slot, []);
      finalize();
      return slot;
    },
    dropUnfinalized() {
      const dropped = pending.map((p) => p.slot);
      for (const p of pending.reverse()) for (const [address, a] of p.before) put(address, a);
      pending = [];
      version += 1;
      return dropped;
    },
    onChange(listener, commitment = "confirmed") {
      const set = commitment === "finalized" ? listeners.finalized : listeners.confirmed;
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}

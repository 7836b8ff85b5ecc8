import type { DomainEvent } from "../providers/provider.js";

/** A decoded event at its place on the chain, as the journal holds it. */
export interface JournalEvent {
  event: DomainEvent;
  blockNumber: number;
  logIndex: number;
  /** Epoch seconds of the block, when known. */
  blockTime: number | null;
  /** Lower-case address of the emitting contract. */
  contract: string;
}

import type { BlockHeader, ChainReader } from "./chain-reader.js";

/**
 * The headers of blocks `first`…`to`, linked by parent hash: taken from `spare` (headers an earlier
 * step read and did not apply, source-sync.ts) where it holds them, read from the node otherwise.
 * Null when the chain moved under the read (a header whose parent is not the one before it): the
 * caller reads again.
 */
export async function linkedHeaders(
  reader: ChainReader,
  first: number,
  to: number,
  spare: ReadonlyMap<number, BlockHeader> | null,
): Promise<Map<number, BlockHeader> | null> {
  const nums: number[] = [];
  for (let n = first; n <= to; n++) if (!spare?.has(n)) nums.push(n);
  const read = new Map((await reader.headers(nums)).map((h) => [h.number, h]));
  const headers = new Map<number, BlockHeader>();
  let prev: BlockHeader | null = null;
  for (let n = first; n <= to; n++) {
    const h = (read.get(n) ?? spare?.get(n)) as BlockHeader;
    if (prev && h.parentHash !== prev.hash) return null;
    headers.set(n, h);
    prev = h;
  }
  return headers;
}

/**
 * Headers read and not yet applied because a one-block part asked too much and ended its step:
 * the following steps, which start right after the parts applied, take them instead of reading
 * them again (`linkedHeaders`). Held from one step to the next only, and given back only by a
 * step that ends normally (one that throws or sees the chain move drops them); each step still
 * links its whole run of headers by parent hash to its checkpoint and checks the logs' block
 * hashes against them, as it does after a fresh read.
 */
export class SpareHeaders {
  private held: Map<number, BlockHeader> | null = null;

  /** The headers held, for one step; none are held afterwards until `keep`. */
  take(): ReadonlyMap<number, BlockHeader> | null {
    const held = this.held;
    this.held = null;
    return held;
  }

  /** Holds those of `headers` from block `from` on, for the next step. */
  keep(headers: Iterable<[number, BlockHeader]>, from: number): void {
    const held = new Map([...headers].filter(([n]) => n >= from));
    this.held = held.size > 0 ? held : null;
  }
}

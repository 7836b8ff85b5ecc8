import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import type { RpcClient } from "../crawler/rpc-client.js";

/**
 * Keeps one devnet chain's state file (anvil-<network>.json.gz) current, and says up to which block
 * it is. anvil's own `--state` writes in place (a kill mid-write truncates the file) and only every
 * `--state-interval` seconds (a crash loses up to that much history, which the index may already
 * hold). Here the state is read with `anvil_dumpState` and written to a temporary file, fsynced,
 * then renamed over the old one: after a crash the file is the last complete save, and every block
 * up to `savedHead()` is in it, with the same hashes. The embedded crawler indexes no further than
 * that block, so a crash of the whole process group never takes back history the index has seen.
 *
 * @example
 * const saver = createStateSaver(rpc, join(dataDir, "anvil-polygon.json.gz"), loadedHead);
 * await saver.save(); // resolves with the block the file now holds
 */
export interface StateSaver {
  /** The highest block the state file holds. */
  savedHead(): number;
  /** Saves the chain as it is now; concurrent calls share the next save. */
  save(): Promise<number>;
  /**
   * Resolves once the file holds `block`: at once when it does, else after the save in flight (when
   * it read a head at or past `block`) or the next one. The embedded crawler calls it on a new head.
   * With `emptyBlocksSaveMs`, blocks without transactions are not saved until that long after the
   * last save: it resolves at once with the older head the file holds (the crawler waits).
   */
  saveThrough(block: number): Promise<number>;
  /** When saveThrough was last called (Date.now()), or 0: a caller follows the chain's heads. */
  followedAt(): number;
}

/**
 * How long blocks without transactions may wait for a save when the crawler asks for one
 * (saveThrough), in the embedded devnet (`emptyBlocksSaveMs`; 0, the default: never): an idle devnet mines an empty block a second on each chain, and
 * dumping a whole chain for each was most of an idle `npm start`'s CPU, anvil's and ours. Such a
 * block changes no name: the crawler indexes it up to this much later (its lag at /status), and a
 * block with a transaction is saved at once, with every empty one before it.
 */
export const EMPTY_BLOCKS_SAVE_MS = 5_000;

/** More unsaved blocks than this are saved at once, without looking into them. */
const MAX_EMPTY_CHECKED = 32;

export function createStateSaver(
  rpc: RpcClient,
  path: string,
  initialHead: number,
  options: { emptyBlocksSaveMs?: number; clock?: () => number } = {},
): StateSaver {
  const clock = options.clock ?? Date.now;
  const emptyBlocksSaveMs = options.emptyBlocksSaveMs ?? 0;
  let saved = initialHead;
  let savedAt = clock();
  let followedAt = 0;
  let running: Promise<number> | null = null;
  let queued: Promise<number> | null = null;

  async function saveNow(): Promise<number> {
    // The head is read before the dump: the dump holds at least this block.
    const head = Number(await rpc.call<string>("eth_blockNumber"));
    const hex = await rpc.call<string>("anvil_dumpState");
    // anvil answers gzip: kept as it comes (a `.json.gz` file, unzipped once when anvil loads it:
    // anvil.ts), not unzipped on every save. In `npm start` a save runs on every new block, and
    // the unzip and the eight times larger write were a third of its time under load. Written off
    // the event loop (libuv's pool): the API shares this thread.
    await writeAtomically(path, Buffer.from(hex.slice(2), "hex"));
    saved = Math.max(saved, head);
    savedAt = clock();
    return saved;
  }

  /** Whether every block after the saved one through `block` has no transaction (false when unsure). */
  async function onlyEmptyThrough(block: number): Promise<boolean> {
    if (saved < 0 || block - saved > MAX_EMPTY_CHECKED) return false;
    const counts = await rpc
      .batch<string | null>(
        Array.from({ length: block - saved }, (_, i) => ({
          method: "eth_getBlockTransactionCountByNumber",
          params: [`0x${(saved + 1 + i).toString(16)}`],
        })),
      )
      .catch(() => null);
    return counts?.every((c) => c !== null && Number(c) === 0) === true;
  }

  const save = (): Promise<number> => {
    if (queued) return queued;
    if (!running) {
      running = saveNow().finally(() => {
        running = null;
      });
      return running;
    }
    // A save in flight may have read the head before the caller's block: wait for the next one.
    queued = running
      .catch(() => {})
      .then(() => {
        queued = null;
        return save();
      });
    return queued;
  };

  const saveThrough = async (block: number): Promise<number> => {
    followedAt = Date.now();
    // Empty blocks wait for a later save, up to emptyBlocksSaveMs after the last one.
    if (
      saved < block &&
      emptyBlocksSaveMs > 0 &&
      clock() - savedAt < emptyBlocksSaveMs &&
      (await onlyEmptyThrough(block))
    )
      return saved;
    // Two saves at most: the one in flight may have read its head before `block` was mined.
    for (let i = 0; i < 2 && saved < block; i++) await save();
    return saved;
  };

  return { savedHead: () => saved, save, saveThrough, followedAt: () => followedAt };
}

/** Writes `bytes` to `path` so that the file is either the old one or the whole new one. */
async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`;
  const file = await open(tmp, "w", 0o644);
  try {
    await file.writeFile(bytes);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  // The rename itself is durable only once the directory is synced.
  const dir = await open(dirname(path), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/**
 * Saves every chain again and again: `intervalMs` apart, or three times as long as the last save
 * took (a bulk world's state is hundreds of MB). A chain whose heads someone follows (the embedded
 * crawler calls saveThrough on each new head; within the last two intervals) is left out of a
 * round: it is saved on every block already, and a second save at once would make the crawler's
 * wait for its block up to twice as long.
 * `stop()` ends the loop after one last save of every chain.
 */
export function startSaving(
  savers: readonly StateSaver[],
  intervalMs: number,
  log: (message: string) => void,
): { stop(): Promise<void> } {
  let stopped = false;
  let wake: () => void = () => {};
  let failing = false;
  const round = async (all: boolean) => {
    try {
      const now = Date.now();
      await Promise.all(
        savers.filter((s) => all || now - s.followedAt() >= 2 * intervalMs).map((s) => s.save()),
      );
      if (failing) log("saving the devnet state works again");
      failing = false;
    } catch (e) {
      // The crawler does not index past the last save, so a failing save stalls it: say so once.
      if (!failing) log(`saving the devnet state failed: ${(e as Error).message}`);
      failing = true;
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const started = Date.now();
      await round(false);
      const wait = Math.max(intervalMs, 3 * (Date.now() - started));
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
      await round(true);
    },
  };
}

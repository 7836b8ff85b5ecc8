import { Worker } from "node:worker_threads";
import { AppError, type ErrorCode } from "../domain/errors.js";
import type { ParseJob, ParseMessage } from "./snapshot-parse-worker.js";

/**
 * The snapshot import's lines, parsed, checked and encoded on a worker thread
 * (snapshot-parse-worker.ts) while this thread writes: on a machine with two cores the parse and
 * the writes overlap instead of adding up. The queue between them is bounded by `job.ahead`
 * messages (each a batch of domains or journal entries): memory stays a few batches, whatever the
 * file's size. A bad line ends the iteration with the error the in-thread check would throw (same
 * code, same message, same line number); leaving the loop early stops the worker.
 */
export async function* parseInWorker(job: ParseJob): AsyncGenerator<ParseMessage> {
  const worker = startWorker(job);
  const queue: ParseMessage[] = [];
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  worker.on("message", (m: ParseMessage) => {
    queue.push(m);
    notify();
  });
  worker.on("error", (e) => {
    failure ??=
      (e as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY"
        ? new AppError(
            "BAD_REQUEST",
            `snapshot lines too large to parse in ${WORKER_HEAP.maxOldGenerationSizeMb} MB`,
          )
        : e;
    notify();
  });
  worker.on("exit", (code) => {
    failure ??= new Error(`snapshot parse worker exited with code ${code}`);
    notify();
  });
  try {
    for (;;) {
      while (queue.length === 0 && failure === null) await new Promise<void>((resolve) => (wake = resolve));
      const m = queue.shift();
      if (m === undefined) throw failure;
      if (m.kind === "error")
        throw m.code === null ? new Error(m.message) : new AppError(m.code as ErrorCode, m.message);
      yield m;
      if (m.kind === "end") return;
      worker.postMessage(0);
    }
  } finally {
    worker.removeAllListeners();
    await worker.terminate();
  }
}

/**
 * The worker's heap. The young generation: 16 MB. Its objects are a message's parsed lines, gone
 * once the message is encoded. With 4 MB (the bound before) each scavenge found up to a message of
 * lines still alive and copied or promoted them (V8 splits the young generation into semi-spaces,
 * so a scavenge came after roughly a third of it was allocated: inferred, not measured). A CPU
 * profile of a 1,000,000-domain SQLite import: the worker 42 % of its time in garbage collection
 * with 4 MB, 17 % with 16 MB; on two cores the collector's time is the writing thread's too. Not
 * 32 MB: as fast, but one PostgreSQL import at 10M then peaked past the import's 300 MB bound. The
 * runs behind these choices: bench/HISTORY.md, "The import's parse worker with a young
 * generation of 16 MB". The old generation: far
 * above a few messages of crawled domains (a few KB a line) but bounded, so that a file of huge
 * lines fails the import instead of the machine.
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 512 };

/**
 * The compiled snapshot-parse-worker.js next to this file; from the TypeScript sources (tsx,
 * vitest) tsx's loader is registered first, which a worker does not inherit.
 */
function startWorker(job: ParseJob): Worker {
  const url = new URL(
    import.meta.url.endsWith(".ts") ? "./snapshot-parse-worker.ts" : "./snapshot-parse-worker.js",
    import.meta.url,
  );
  if (!import.meta.url.endsWith(".ts"))
    return new Worker(url, { workerData: job, resourceLimits: WORKER_HEAP });
  const tsx = import.meta.resolve("tsx/esm/api");
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`,
    { eval: true, workerData: job, resourceLimits: WORKER_HEAP },
  );
}

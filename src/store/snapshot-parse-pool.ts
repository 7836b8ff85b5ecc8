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
 * The compiled snapshot-parse-worker.js next to this file; from the TypeScript sources (tsx,
 * vitest) tsx's loader is registered first, which a worker does not inherit.
 */
/**
 * The worker's heap: a small young generation (its objects are a batch's lines, gone once the
 * batch is encoded; the default lets the process grow ~80 MB more, measured at 100,000 domains:
 * peak RSS 328 MB → 249 MB, same CPU), and an old generation far above a few batches of
 * crawled domains (a few KB a line) but bounded, so that a file of huge lines fails the import
 * instead of the machine.
 */
const WORKER_HEAP = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 512 };

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

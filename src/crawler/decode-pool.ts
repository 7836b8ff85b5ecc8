import { Worker } from "node:worker_threads";
import {
  answerJob,
  DECODE_WORKER,
  type DecodeAnswer,
  type DecodeJob,
  WORKER_READY,
} from "./decode-worker.js";
import { rpcError } from "./rpc-faults.js";

/**
 * The main thread's side of the decode worker: one worker thread per process, started on first
 * use and shared by every source. Each job hands over the bytes of one eth_getLogs reply (moved,
 * not copied) and gets back the reply object with its logs decoded (log-batch.ts).
 *
 * A worker that dies fails its jobs with a retryable `server` fault (the RPC client asks the node
 * again) and is not used again: later replies are parsed and decoded on the main thread, the same
 * way (answerJob).
 */
export interface LogDecoder {
  decode(body: ArrayBuffer, job: Omit<DecodeJob, "id" | "body">): Promise<unknown>;
}

interface Pending {
  resolve(reply: unknown): void;
  reject(e: Error): void;
}

interface Shared {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Resolves true once the worker's modules are loaded, false if it dies first. */
  ready: Promise<boolean>;
}

let shared: Shared | null = null;
let broken = false;
let nextId = 1;

function workerOf(): Shared | null {
  if (broken) return null;
  if (shared) return shared;
  let worker: Worker;
  try {
    worker = startWorker();
  } catch {
    broken = true;
    return null;
  }
  const pending = new Map<number, Pending>();
  let markReady: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => {
    markReady = resolve;
  });
  const fail = (why: string) => {
    markReady(false);
    broken = true;
    shared = null;
    for (const p of pending.values())
      p.reject(rpcError(`eth_getLogs: decode worker ${why}`, { fault: "server", method: "eth_getLogs" }));
    pending.clear();
  };
  worker.on("message", (m: DecodeAnswer | typeof WORKER_READY) => {
    if (m === WORKER_READY) {
      markReady(true);
      if (pending.size === 0) worker.unref();
      return;
    }
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (pending.size === 0) worker.unref();
    if ("malformed" in m) p.reject(malformed(m.malformed));
    else p.resolve(m.reply);
  });
  worker.on("error", (e) => fail(`failed: ${e.message}`));
  worker.on("exit", (code) => fail(`exited with code ${code}`));
  // An idle worker does not keep the process alive; one starting or with jobs in flight does.
  shared = { worker, pending, ready };
  return shared;
}

/**
 * The worker runs the compiled decode-worker.js next to this file; from the TypeScript sources
 * (tsx, vitest) it first registers tsx's loader, which a worker does not inherit.
 */
function startWorker(): Worker {
  const url = new URL(
    import.meta.url.endsWith(".ts") ? "./decode-worker.ts" : "./decode-worker.js",
    import.meta.url,
  );
  if (!import.meta.url.endsWith(".ts")) return new Worker(url, { workerData: DECODE_WORKER });
  const tsx = import.meta.resolve("tsx/esm/api");
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); });`,
    { eval: true, workerData: DECODE_WORKER },
  );
}

/**
 * Starts the worker ahead of its first job, so that its start-up (loading the adapters) overlaps
 * the first requests. Resolves true once it is ready, false when it cannot run.
 */
export function startLogDecoder(): Promise<boolean> {
  return workerOf()?.ready ?? Promise.resolve(false);
}

/** Decodes off the main thread while a worker runs, on it otherwise. */
export const logDecoder: LogDecoder = {
  decode(body, job) {
    const w = workerOf();
    const id = nextId++;
    if (w === null) {
      const { message } = answerJob({ ...job, id, body });
      return "malformed" in message
        ? Promise.reject(malformed(message.malformed))
        : Promise.resolve(message.reply);
    }
    return new Promise((resolve, reject) => {
      w.pending.set(id, { resolve, reject });
      w.worker.ref();
      w.worker.postMessage({ ...job, id, body } satisfies DecodeJob, [body]);
    });
  },
};

const malformed = (why: string) =>
  rpcError(`eth_getLogs: malformed JSON (${why})`, { fault: "server", method: "eth_getLogs" });

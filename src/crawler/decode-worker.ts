import { parentPort, workerData } from "node:worker_threads";
import type { Provider } from "../domain/providers.js";
import { adapterFor } from "../providers/adapters.js";
import type { SourceContracts } from "../providers/provider.js";
import { decodeLogBatch, type RpcLog } from "./log-batch.js";

/**
 * The decode worker's thread (decode-pool.ts starts it): it turns the raw bytes of an eth_getLogs
 * reply into a decoded batch, so that JSON parsing and the adapters' decoding (~9 µs a log here)
 * run beside the main thread, which writes the store. Pure: no I/O but the messages.
 */
export interface DecodeJob {
  id: number;
  body: ArrayBuffer;
  provider: Provider;
  contracts: SourceContracts;
  chainId: number;
  from: number;
  to: number;
}

/** The reply object as the RPC client unwraps it (its `result` a DecodedBatch), or malformed JSON. */
export type DecodeAnswer = { id: number; reply: unknown } | { id: number; malformed: string };

const utf8 = new TextDecoder();

/** Marks the decode worker's thread (any other worker, a test runner's, must not listen here). */
export const DECODE_WORKER = "omniname-decode-worker";

/** The answer to a job, and the buffers it moves back. Also run on the main thread without a worker. */
export function answerJob(job: DecodeJob): { message: DecodeAnswer; transfer: ArrayBuffer[] } {
  let reply: { result?: unknown; error?: unknown } | null;
  try {
    reply = JSON.parse(utf8.decode(job.body));
  } catch (e) {
    return { message: { id: job.id, malformed: (e as Error).message }, transfer: [] };
  }
  const adapter = adapterFor(job.provider);
  // Errors, null results and non-arrays go back as they are: the client judges them as usual.
  if (
    adapter === null ||
    reply === null ||
    typeof reply !== "object" ||
    reply.error ||
    !Array.isArray(reply.result)
  )
    return { message: { id: job.id, reply }, transfer: [] };
  const batch = decodeLogBatch(reply.result as RpcLog[], adapter, job.contracts, job.chainId, job);
  return {
    message: { id: job.id, reply: { ...reply, result: batch } },
    transfer: [
      batch.blockNumbers.buffer,
      batch.logIndexes.buffer,
      batch.blockTimes.buffer,
      batch.blockHashOf.buffer,
      batch.txHashOf.buffer,
      batch.addressOf.buffer,
      batch.ok.buffer,
    ] as ArrayBuffer[],
  };
}

/** Posted once the worker's modules are loaded. */
export const WORKER_READY = "ready";

if (parentPort && workerData === DECODE_WORKER) {
  const port = parentPort;
  port.on("message", (job: DecodeJob) => {
    const { message, transfer } = answerJob(job);
    port.postMessage(message, transfer);
  });
  port.postMessage(WORKER_READY);
}

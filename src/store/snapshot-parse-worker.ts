import { parentPort, workerData } from "node:worker_threads";
import { AppError } from "../domain/errors.js";
import type { Checkpoint, JournalEntry } from "./crawler-log.port.js";
import { packSqlite, pgCopyText, sqliteColumns } from "./snapshot-encode.js";
import { checkLine, parseObject, readSnapshotLines } from "./snapshot-lines.js";
import { lastPerToken } from "./snapshot-batch.js";
import type { EncodedDomains, SnapshotDomain, SnapshotEncoding } from "./snapshot-sink.port.js";

/**
 * The snapshot import's parse worker (started by snapshot-parse-pool.ts): reads the file, parses
 * and checks each line after the header exactly as the in-thread import does (snapshot-lines.ts:
 * same checks, same errors with their line numbers), folds each batch (`lastPerToken`) and
 * encodes it for the sink's backend (snapshot-encode.ts). It runs ahead of the writing thread by
 * at most `ahead` messages: each message the writer has taken is acknowledged with one message back.
 */
export interface ParseJob {
  file: string;
  /** The header's line: lines up to it are skipped. */
  afterLine: number;
  batchSize: number;
  journalBatch: number;
  encoding: SnapshotEncoding;
  ahead: number;
  maxLineBytes?: number;
}

export type ParseMessage =
  | { kind: "domains"; batch: EncodedDomains; lines: number; records: number; reverse: number }
  | { kind: "journal"; entries: JournalEntry[] }
  | { kind: "checkpoints"; checkpoints: Checkpoint[] }
  | { kind: "end"; lastLine: number }
  | { kind: "error"; code: string | null; message: string };

async function run(port: NonNullable<typeof parentPort>, job: ParseJob): Promise<void> {
  let credits = job.ahead;
  let wake: (() => void) | null = null;
  port.on("message", () => {
    credits++;
    wake?.();
    wake = null;
  });
  const send = async (m: ParseMessage) => {
    while (credits <= 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    port.postMessage(m);
  };
  const enc = job.encoding;
  let next = enc.store === "postgres" ? enc.bulkNext : null;
  const encode = (lines: SnapshotDomain[]): ParseMessage => {
    let records = 0;
    let reverse = 0;
    for (const l of lines) {
      records += l.records.length;
      reverse += l.reverse.length;
    }
    const b = lastPerToken(lines);
    let batch: EncodedDomains;
    if (enc.store === "sqlite") {
      const columns = sqliteColumns(b);
      const packed = packSqlite(columns);
      batch = { store: "sqlite", n: b.length, packed, columns: packed === null ? columns : null };
    } else {
      batch = { store: "postgres", n: b.length, text: pgCopyText(b, next) };
      if (next !== null) next += b.length;
    }
    return { kind: "domains", batch, lines: lines.length, records, reverse };
  };
  let batch: SnapshotDomain[] = [];
  let journal: JournalEntry[] = [];
  const checkpoints: Checkpoint[] = [];
  let lastLine = job.afterLine;
  for await (const { lineNo, text } of readSnapshotLines(job.file, job.maxLineBytes)) {
    if (lineNo <= job.afterLine) continue;
    lastLine = lineNo;
    const line = checkLine(parseObject(text, lineNo), lineNo);
    if (line.type === "domain") {
      batch.push(line.value);
      if (batch.length >= job.batchSize) {
        await send(encode(batch));
        batch = [];
      }
    } else if (line.type === "journal") {
      journal.push(line.value);
      if (journal.length >= job.journalBatch) {
        await send({ kind: "journal", entries: journal });
        journal = [];
      }
    } else checkpoints.push(line.value);
  }
  if (batch.length > 0) await send(encode(batch));
  if (journal.length > 0) await send({ kind: "journal", entries: journal });
  if (checkpoints.length > 0) await send({ kind: "checkpoints", checkpoints });
  await send({ kind: "end", lastLine });
}

if (parentPort) {
  const port = parentPort;
  run(port, workerData as ParseJob).catch((err: unknown) => {
    port.postMessage({
      kind: "error",
      code: err instanceof AppError ? err.code : null,
      message: err instanceof Error ? err.message : String(err),
    } satisfies ParseMessage);
  });
}

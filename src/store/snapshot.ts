import { once } from "node:events";
import { createWriteStream } from "node:fs";
import type { DomainRecord, DomainWrite } from "../domain/types.js";
import type { Checkpoint, JournalEntry } from "./crawler-log.port.js";
import { badLine, checkLine, parseObject, readSnapshotLines } from "./snapshot-lines.js";
import { parseInWorker } from "./snapshot-parse-pool.js";
import { lastPerToken } from "./snapshot-batch.js";
import type { SnapshotDomain, SnapshotSink } from "./snapshot-sink.port.js";
import type { Store } from "./store.js";

/**
 * Snapshots move the whole map as JSON Lines, so an operator can bootstrap a node without
 * re-crawling. Line 1 is a header; then one line per domain (with its records and the addresses
 * whose reverse record names it), per journal entry and per checkpoint. Checkpoints are written
 * only together with the journal: a crawler resuming from a checkpoint must be able to replay a
 * token's history when a reorg touches it.
 */
const SNAPSHOT_FORMAT = "omniname-snapshot";
const SNAPSHOT_VERSION = 1;

type DomainLine = {
  type: "domain";
  records: DomainRecord[];
  reverse: Array<{ address: string }>;
} & DomainWrite;
type JournalLine = { type: "journal" } & JournalEntry;
type CheckpointLine = { type: "checkpoint" } & Checkpoint;

export interface SnapshotCounts {
  domains: number;
  records: number;
  reverse: number;
  journal: number;
  checkpoints: number;
}

/**
 * Domains read per page on export, and per write on import: memory is bounded by one batch (a
 * few on import: the parse worker runs up to IMPORT_AHEAD_DOMAINS ahead). 1,000 rather than
 * 5,000: as fast (measured at 50k domains on both backends), and the importer's peak RSS 100 MB
 * lower. Export pages of 500 rather than 2,000: the same CPU, and a page's objects, which outlive
 * a young-generation collection, no longer grow the old generation to a peak RSS of 350 MB
 * (235-250 MB at 100,000 domains, measured).
 */
const EXPORT_PAGE = 500;
/** Export lines per write (~70 KB of text: a young-generation string, not a large object). */
const WRITE_LINES = 50;
const IMPORT_BATCH = 1000;
const JOURNAL_BATCH = 5000;
/** Domains the parse worker may hold ahead of the writer (in messages: this over the message's size). */
const IMPORT_AHEAD_DOMAINS = 4 * IMPORT_BATCH;

/** Code-unit order: the same on every backend, whatever its collation. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

/**
 * Writes the map page by page: each page of domains (with their records) and the reverse records
 * naming them, so memory stays that of one page whatever the map's size. Records are sorted by
 * key and reverse addresses by address, so two exports of equal maps are equal byte for byte
 * (the header's `exportedAt` aside).
 */
export async function exportSnapshot(
  store: Store,
  file: string,
  opts: { journal?: boolean } = {},
): Promise<SnapshotCounts> {
  const withJournal = opts.journal ?? true;
  const out = createWriteStream(file, { encoding: "utf8", highWaterMark: 1 << 20 });
  const counts: SnapshotCounts = { domains: 0, records: 0, reverse: 0, journal: 0, checkpoints: 0 };
  try {
    const header = {
      type: "header",
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      exportedAt: new Date().toISOString(),
      domains: await store.domainMap.countDomains(),
      journal: withJournal,
    };
    await write(out, `${JSON.stringify(header)}\n`);
    for await (const page of store.domainMap.iterateDomains(EXPORT_PAGE)) {
      const reverseOf = new Map<number, string[]>();
      for (const r of await store.domainMap.findReverseByDomainIds(page.map((d) => d.id))) {
        const list = reverseOf.get(r.domainId);
        if (list) list.push(r.address);
        else reverseOf.set(r.domainId, [r.address]);
      }
      let text = "";
      for (const d of page) {
        const { id, records, ...rest } = d;
        const reverse = (reverseOf.get(id) ?? []).sort(byText).map((address) => ({ address }));
        const line: DomainLine = {
          type: "domain",
          ...rest,
          records: records.sort((a, b) => byText(a.key, b.key)),
          reverse,
        };
        text += `${JSON.stringify(line)}\n`;
        counts.domains++;
        counts.records += records.length;
        counts.reverse += reverse.length;
        // Written every WRITE_LINES lines: a page's text in one string (~0.7 MB) is a large object,
        // which only a full collection frees (the old generation grew by ~150 MB between them).
        if (counts.domains % WRITE_LINES === 0) {
          await write(out, text);
          text = "";
        }
      }
      if (text !== "") await write(out, text);
    }
    if (withJournal) {
      for await (const page of store.crawlerLog.iterateJournal(JOURNAL_BATCH)) {
        let text = "";
        for (const e of page) text += `${JSON.stringify({ type: "journal", ...e } satisfies JournalLine)}\n`;
        counts.journal += page.length;
        await write(out, text);
      }
      for (const c of await store.crawlerLog.listCheckpoints()) {
        await write(out, `${JSON.stringify({ type: "checkpoint", ...c } satisfies CheckpointLine)}\n`);
        counts.checkpoints++;
      }
    }
    out.end();
    await once(out, "finish");
  } catch (err) {
    out.destroy();
    throw err;
  }
  return counts;
}

/** The map's writes through the port, in one transaction: for a store without a bulk path. */
function portSink(tx: Store): SnapshotSink {
  return {
    async writeDomains(batch) {
      const ids = await tx.domainMap.upsertDomains(batch.map((b) => b.domain));
      await tx.domainMap.replaceRecordsMany(batch.map((b, i) => ({ domainId: ids[i], records: b.records })));
      for (const [i, b] of batch.entries())
        for (const address of b.reverse)
          await tx.domainMap.setReverse({
            network: b.domain.network,
            provider: b.domain.provider,
            address,
            domainId: ids[i],
          });
    },
    writeJournal: (entries) => tx.crawlerLog.appendJournal(entries),
    async writeCheckpoints(checkpoints) {
      for (const c of checkpoints) await tx.crawlerLog.setCheckpoint(c);
    },
  };
}

/**
 * Imports a snapshot into the store, atomically: every line is checked before it is written, and
 * the whole file is written in one transaction, through the backend's bulk path
 * (`withSnapshotSink`) in batches of IMPORT_BATCH domains. A bad line (not JSON, not an object,
 * unknown type, a missing or mistyped field, longer than MAX_LINE_BYTES) stops the import with an
 * error naming its line, and the store is left as it was. Domains upsert by (network, provider,
 * token id) and their records are replaced, so importing a snapshot twice changes nothing.
 * Into an empty map (a new node bootstrapping) both backends bulk-load instead: indexes and
 * triggers dropped and built again in the same transaction (snapshot-bulk-load.ts), same result.
 */
export async function importSnapshot(
  store: Store,
  file: string,
  opts: { batchSize?: number; maxLineBytes?: number; worker?: boolean } = {},
): Promise<SnapshotCounts> {
  const batchSize = opts.batchSize ?? IMPORT_BATCH;
  const counts: SnapshotCounts = { domains: 0, records: 0, reverse: 0, journal: 0, checkpoints: 0 };
  const lines = readSnapshotLines(file, opts.maxLineBytes);
  try {
    const first = await lines.next();
    if (first.done) throw badLine(1, "empty file");
    const { lineNo: headerLine, text } = first.value;
    const header = parseObject(text, headerLine);
    if (header.type !== "header" || header.format !== SNAPSHOT_FORMAT)
      throw badLine(headerLine, "not an omniname snapshot");
    if (header.version !== SNAPSHOT_VERSION)
      throw badLine(headerLine, `unsupported version ${String(header.version)}`);
    const announced = typeof header.domains === "number" ? header.domains : null;

    const loadHere = async (sink: SnapshotSink) => {
      let batch: SnapshotDomain[] = [];
      let journal: JournalEntry[] = [];
      const checkpoints: Checkpoint[] = [];
      let lastLine = headerLine;
      for await (const { lineNo, text } of lines) {
        lastLine = lineNo;
        const line = checkLine(parseObject(text, lineNo), lineNo);
        if (line.type === "domain") {
          batch.push(line.value);
          counts.domains++;
          counts.records += line.value.records.length;
          counts.reverse += line.value.reverse.length;
          if (batch.length >= batchSize) {
            await sink.writeDomains(lastPerToken(batch));
            batch = [];
          }
        } else if (line.type === "journal") {
          journal.push(line.value);
          if (journal.length >= JOURNAL_BATCH) {
            counts.journal += await sink.writeJournal(journal);
            journal = [];
          }
        } else {
          checkpoints.push(line.value);
          counts.checkpoints++;
        }
      }
      // A file cut right after its header would otherwise import as an empty map.
      if (counts.domains === 0 && announced !== null && announced > 0)
        throw badLine(lastLine, `no domain line, but the header announces ${announced} (truncated file?)`);
      if (batch.length > 0) await sink.writeDomains(lastPerToken(batch));
      if (journal.length > 0) counts.journal += await sink.writeJournal(journal);
      if (checkpoints.length > 0) await sink.writeCheckpoints(checkpoints);
    };
    // Off this thread when the sink takes encoded batches: the parse and the writes overlap.
    const loadInWorker = async (
      sink: SnapshotSink & Required<Pick<SnapshotSink, "encoding" | "writeEncoded">>,
    ) => {
      await lines.return(undefined);
      // The sink's message size if it has one: a bulk load takes small messages (measured at
      // 200,000 domains: the worker's CPU 7.3-7.9 s in messages of 1,000, 3.8-3.9 s in messages of
      // 100: a message's parsed lines no longer outlive the worker's young generation).
      const messageSize = opts.batchSize ?? sink.encoding.batch ?? batchSize;
      const messages = parseInWorker({
        file,
        afterLine: headerLine,
        batchSize: messageSize,
        journalBatch: JOURNAL_BATCH,
        encoding: sink.encoding,
        ahead: Math.max(4, Math.ceil(IMPORT_AHEAD_DOMAINS / messageSize)),
        maxLineBytes: opts.maxLineBytes,
      });
      for await (const m of messages) {
        if (m.kind === "domains") {
          counts.domains += m.lines;
          counts.records += m.records;
          counts.reverse += m.reverse;
          await sink.writeEncoded(m.batch);
        } else if (m.kind === "journal") counts.journal += await sink.writeJournal(m.entries);
        else if (m.kind === "checkpoints") {
          counts.checkpoints += m.checkpoints.length;
          await sink.writeCheckpoints(m.checkpoints);
        } else if (m.kind === "end" && counts.domains === 0 && announced !== null && announced > 0)
          // A file cut right after its header would otherwise import as an empty map.
          throw badLine(
            m.lastLine,
            `no domain line, but the header announces ${announced} (truncated file?)`,
          );
      }
    };
    const load = (sink: SnapshotSink) =>
      sink.encoding && sink.writeEncoded && opts.worker !== false
        ? loadInWorker({ ...sink, encoding: sink.encoding, writeEncoded: sink.writeEncoded.bind(sink) })
        : loadHere(sink);
    if (store.withSnapshotSink) await store.withSnapshotSink(load);
    else await store.transaction((tx) => load(portSink(tx)));
  } finally {
    await lines.return(undefined);
  }
  return counts;
}

import { createReadStream, createWriteStream } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { AppError } from "../domain/errors.js";
import { isNetwork } from "../domain/networks.js";
import { isProvider } from "../domain/providers.js";
import type { DomainRecord, DomainWrite } from "../domain/types.js";
import type { Checkpoint, JournalEntry } from "./crawler-log.port.js";
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

interface SnapshotCounts {
  domains: number;
  records: number;
  reverse: number;
  journal: number;
  checkpoints: number;
}

async function write(out: NodeJS.WritableStream, line: unknown): Promise<void> {
  if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, "drain");
}

export async function exportSnapshot(
  store: Store,
  file: string,
  opts: { journal?: boolean } = {},
): Promise<SnapshotCounts> {
  const withJournal = opts.journal ?? true;
  const out = createWriteStream(file, { encoding: "utf8" });
  const counts: SnapshotCounts = { domains: 0, records: 0, reverse: 0, journal: 0, checkpoints: 0 };
  await write(out, {
    type: "header",
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    exportedAt: new Date().toISOString(),
    domains: await store.countDomains(),
    journal: withJournal,
  });
  const reverseByDomain = new Map<number, Array<{ address: string }>>();
  for (const r of await store.listReverseRecords()) {
    const list = reverseByDomain.get(r.domainId) ?? [];
    list.push({ address: r.address });
    reverseByDomain.set(r.domainId, list);
  }
  for await (const page of store.iterateDomains(1000)) {
    for (const d of page) {
      const { id, records, ...rest } = d;
      const reverse = reverseByDomain.get(id) ?? [];
      await write(out, { type: "domain", ...rest, records, reverse } satisfies DomainLine);
      counts.domains++;
      counts.records += records.length;
      counts.reverse += reverse.length;
    }
  }
  if (withJournal) {
    for await (const page of store.iterateJournal(5000)) {
      for (const e of page) {
        await write(out, { type: "journal", ...e } satisfies JournalLine);
        counts.journal++;
      }
    }
    for (const c of await store.listCheckpoints()) {
      await write(out, { type: "checkpoint", ...c } satisfies CheckpointLine);
      counts.checkpoints++;
    }
  }
  out.end();
  await once(out, "finish");
  return counts;
}

function bad(lineNo: number, why: string): AppError {
  return new AppError("BAD_REQUEST", `snapshot line ${lineNo}: ${why}`);
}

function checkDomain(v: Record<string, unknown>, lineNo: number): DomainLine {
  if (typeof v.provider !== "string" || !isProvider(v.provider)) throw bad(lineNo, "unknown provider");
  if (typeof v.network !== "string" || !isNetwork(v.network)) throw bad(lineNo, "unknown network");
  for (const k of ["tokenId", "name", "sld", "tld", "owner", "contractAddress"]) {
    if (typeof v[k] !== "string") throw bad(lineNo, `${k} must be a string`);
  }
  if (!Array.isArray(v.records)) throw bad(lineNo, "records must be an array");
  return v as unknown as DomainLine;
}

/**
 * Imports a snapshot into the store, upserting by (network, provider, token id), in transactions
 * of 500 lines. The whole file is validated line by line; a bad line stops the import with its
 * number, and what was committed before it stays consistent (every domain is written whole).
 */
export async function importSnapshot(store: Store, file: string): Promise<SnapshotCounts> {
  const counts: SnapshotCounts = { domains: 0, records: 0, reverse: 0, journal: 0, checkpoints: 0 };
  const rl = createInterface({
    input: createReadStream(file, { encoding: "utf8" }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let lineNo = 0;
  let batch: Array<{ lineNo: number; value: Record<string, unknown> }> = [];
  const flush = async () => {
    const lines = batch;
    batch = [];
    await store.transaction(async (tx) => {
      const journal: JournalEntry[] = [];
      for (const { lineNo: n, value } of lines) {
        if (value.type === "domain") {
          const { type, records, reverse, ...d } = checkDomain(value, n);
          const id = await tx.upsertDomain(d);
          await tx.replaceRecords(id, records);
          for (const r of reverse ?? []) {
            await tx.setReverse({
              network: d.network,
              provider: d.provider,
              address: r.address,
              domainId: id,
            });
          }
          counts.domains++;
          counts.records += records.length;
          counts.reverse += (reverse ?? []).length;
        } else if (value.type === "journal") {
          const { type, ...e } = value as unknown as JournalLine;
          journal.push(e);
        } else if (value.type === "checkpoint") {
          const { type, ...c } = value as unknown as CheckpointLine;
          await tx.setCheckpoint(c);
          counts.checkpoints++;
        } else throw bad(n, `unknown line type ${JSON.stringify(value.type)}`);
      }
      counts.journal += await tx.appendJournal(journal);
    });
  };
  for await (const line of rl) {
    lineNo++;
    if (line.trim() === "") continue;
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw bad(lineNo, "not JSON");
    }
    if (lineNo === 1) {
      if (value.type !== "header" || value.format !== SNAPSHOT_FORMAT)
        throw bad(1, "not an omniname snapshot");
      if (value.version !== SNAPSHOT_VERSION) throw bad(1, `unsupported version ${String(value.version)}`);
      continue;
    }
    batch.push({ lineNo, value });
    if (batch.length >= 500) await flush();
  }
  if (lineNo === 0) throw bad(1, "empty file");
  if (batch.length > 0) await flush();
  return counts;
}

import type { ChangedRecord, ChangeEventWrite, ChangePayload, RankPrior } from "../domain/change-events.js";
import type { DomainRecord, DomainWithRecords, DomainWrite } from "../domain/types.js";
import type { CrawlerSource } from "./crawler-source.js";

/**
 * The change log's events of one write of the map (change-log.port.ts): pure, so that a range, a
 * crash resume and a reorg replay describe a change the same way. A write that leaves what a
 * client sees (owner, records, expiry, name) alone is no event: a rescoring, a block number.
 */

/** Where a domain's change happened: its last change in the range (or the reorg's ancestor). */
export interface ChangePosition {
  blockNumber: number;
  blockHash: string;
  txHash: string | null;
  /** Epoch ms of the block, when known. */
  blockTime: number | null;
}

/** What reproject needs to log the changes it writes (absent: nothing is logged). */
export interface ChangeLogging {
  now: number;
  /** Changes in blocks older than this (epoch ms; the retention window's start) are not logged. */
  since: number | null;
  /** Tokens with no earlier journal entry: no domain row can exist, nothing is read back for them. */
  fresh: ReadonlySet<string>;
  positionOf(tokenId: string): ChangePosition;
  /** What the events become before they are appended (RangeWrite.settle). */
  settle?: (events: ChangeEventWrite[]) => Promise<ChangeEventWrite[]>;
}

/** False for a change older than the retention window: it is neither logged nor read back. */
export function isLogged(logging: ChangeLogging, at: ChangePosition): boolean {
  return logging.since === null || at.blockTime === null || at.blockTime >= logging.since;
}

const shown = (records: readonly DomainRecord[]): ChangedRecord[] =>
  records.map((r) => ({ key: r.key, value: r.value }));

function diffRecords(
  before: readonly DomainRecord[],
  after: readonly DomainRecord[],
): ChangePayload["records"] {
  const old = new Map(before.map((r) => [r.key, r.value]));
  const added: ChangedRecord[] = [];
  const changed: Array<{ key: string; from: string; to: string }> = [];
  for (const r of after) {
    const was = old.get(r.key);
    if (was === undefined) added.push({ key: r.key, value: r.value });
    else if (was !== r.value) changed.push({ key: r.key, from: was, to: r.value });
    old.delete(r.key);
  }
  const removed = [...old].map(([key, value]) => ({ key, value }));
  if (added.length + changed.length + removed.length === 0) return undefined;
  return { added, removed, changed };
}

const priorOf = (d: DomainWithRecords): RankPrior => ({
  baseScore: d.baseScore,
  registeredAt: d.registeredAt,
  expiresAt: d.expiresAt,
  csamOk: d.csamOk,
});

/**
 * The event of one domain's write: `after` undefined is a removal. Null when nothing a client sees
 * changed (or a token that was no domain stays none).
 *
 * @example diffDomain(undefined, { ...write, records }) // { type: "domain.created", payload: { state } }
 */
export function diffDomain(
  before: DomainWithRecords | undefined,
  after: (DomainWrite & { records: DomainRecord[] }) | undefined,
): Pick<ChangeEventWrite, "type" | "payload" | "name" | "tld"> | null {
  if (after === undefined) {
    if (before === undefined) return null;
    return {
      type: "domain.removed",
      name: before.name,
      tld: before.tld,
      payload: { owner: { from: before.owner, to: null }, prior: priorOf(before) },
    };
  }
  const state = { owner: after.owner, expiresAt: after.expiresAt, records: shown(after.records) };
  if (before === undefined)
    return { type: "domain.created", name: after.name, tld: after.tld, payload: { state } };
  const payload: ChangePayload = {};
  if (before.owner !== after.owner) payload.owner = { from: before.owner, to: after.owner };
  const records = diffRecords(before.records, after.records);
  if (records) payload.records = records;
  if (before.expiresAt !== after.expiresAt)
    payload.expiresAt = { from: before.expiresAt, to: after.expiresAt };
  if (before.name !== after.name) payload.nameChanged = { from: before.name, to: after.name };
  if (Object.keys(payload).length === 0) return null;
  payload.state = state;
  payload.prior = priorOf(before);
  return { type: "domain.updated", name: after.name, tld: after.tld, payload };
}

/** The events of a batch of writes and removals of one source, in the batch's order. */
export function changeEventsOf(
  source: Pick<CrawlerSource, "id" | "network" | "provider">,
  logging: ChangeLogging,
  before: ReadonlyMap<string, DomainWithRecords>,
  written: ReadonlyArray<DomainWrite & { records: DomainRecord[] }>,
  removed: readonly string[],
): ChangeEventWrite[] {
  const out: ChangeEventWrite[] = [];
  const push = (tokenId: string, diff: ReturnType<typeof diffDomain>) => {
    if (diff === null) return;
    const at = logging.positionOf(tokenId);
    if (!isLogged(logging, at)) return;
    out.push({
      type: diff.type,
      name: diff.name,
      tld: diff.tld,
      payload: diff.payload,
      createdAt: logging.now,
      sourceId: source.id,
      network: source.network,
      provider: source.provider,
      tokenId,
      blockNumber: at.blockNumber,
      blockHash: at.blockHash,
      txHash: at.txHash,
      blockTime: at.blockTime,
      retracts: null,
      projectId: null,
    });
  };
  for (const w of written) push(w.tokenId, diffDomain(before.get(w.tokenId), w));
  for (const tokenId of removed) push(tokenId, diffDomain(before.get(tokenId), undefined));
  return out;
}

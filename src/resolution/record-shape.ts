import type { Provenance } from "../domain/history.js";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type { DomainRecord } from "../domain/types.js";
import type { RankedDomain, ScoreDetail } from "./rank.js";

/** The `info` object of a wire record (interface spec, "info object"). */
export interface WireInfo {
  sld: string;
  tld: string;
  /** Absent in reverse-resolve records, as in the spec's example. */
  smartContractAddress?: string;
  /** ISO 8601 UTC with milliseconds. */
  lastUpdate: string;
  CSAMValidation: boolean;
  KYC: boolean;
  tags: string[];
}

/** One domain record as the REST API returns it. */
export interface WireRecord {
  info: WireInfo;
  records: Record<string, string>;
  domain: string;
  fullQualifiedDomain: string;
  network: Network;
  provider: Provider;
  ownerAddress: string;
  score: number;
  spam: boolean;
  /** Only with `?explain=true` on resolve and deep-resolve. */
  scoreDetails?: ScoreDetail[];
  /** Only with `?provenance=true`. */
  provenance?: Provenance;
}

export type ShapeMode = "forward" | "reverse";

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** End (exclusive) of the dot-separated segment that starts at `i`. */
function segmentEnd(s: string, i: number): number {
  const dot = s.indexOf(".", i);
  return dot === -1 ? s.length : dot;
}

function allDigits(s: string, from: number, to: number): boolean {
  if (from === to) return false;
  for (let i = from; i < to; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/** Compares two all-digit segments by value, without overflow: leading zeros off, longer is larger. */
function compareNumeric(a: string, i: number, ea: number, b: string, j: number, eb: number): number {
  let sa = i;
  let sb = j;
  while (sa < ea - 1 && a.charCodeAt(sa) === 48) sa++;
  while (sb < eb - 1 && b.charCodeAt(sb) === 48) sb++;
  if (ea - sa !== eb - sb) return ea - sa < eb - sb ? -1 : 1;
  for (let k = 0; k < ea - sa; k++) {
    const d = a.charCodeAt(sa + k) - b.charCodeAt(sb + k);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  // Same value: fewer leading zeros first, so the order stays total.
  return ea - i === eb - j ? 0 : ea - i < eb - j ? -1 : 1;
}

function compareText(a: string, i: number, ea: number, b: string, j: number, eb: number): number {
  const la = ea - i;
  const lb = eb - j;
  const n = Math.min(la, lb);
  for (let k = 0; k < n; k++) {
    const d = a.charCodeAt(i + k) - b.charCodeAt(j + k);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return la === lb ? 0 : la < lb ? -1 : 1;
}

/**
 * Orders record keys segment by segment, numeric segments by value, so that `record.A.2` comes
 * before `record.A.10` (a plain string sort puts `10` first). Numeric segments sort before words;
 * a key that is a prefix of another comes first. Allocation-free: it runs on every answer.
 */
export function compareRecordKeys(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  for (;;) {
    const ea = segmentEnd(a, i);
    const eb = segmentEnd(b, j);
    const na = allDigits(a, i, ea);
    const nb = allDigits(b, j, eb);
    const c =
      na && nb
        ? compareNumeric(a, i, ea, b, j, eb)
        : na !== nb
          ? na
            ? -1
            : 1
          : compareText(a, i, ea, b, j, eb);
    if (c !== 0) return c;
    const endA = ea >= a.length;
    const endB = eb >= b.length;
    if (endA || endB) return endA === endB ? 0 : endA ? -1 : 1;
    i = ea + 1;
    j = eb + 1;
  }
}

function inOrder(records: readonly DomainRecord[]): boolean {
  for (let i = 1; i < records.length; i++)
    if (compareRecordKeys(records[i - 1].key, records[i].key) > 0) return false;
  return true;
}

/**
 * The records map in key order. Record keys come from chain data (an unmapped native key is kept
 * as is): a key named `__proto__` is defined as an own property, never assigned, so it cannot
 * replace the object's prototype.
 */
export function buildRecordsMap(records: readonly DomainRecord[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (records.length === 0) return out;
  // The store returns records in byte order, which already is this order unless an index has
  // more digits than another (record.A.10 vs record.A.2): sort only then.
  const sorted = inOrder(records) ? records : [...records].sort((a, b) => compareRecordKeys(a.key, b.key));
  for (const r of sorted) {
    if (r.key === "__proto__") {
      Object.defineProperty(out, r.key, {
        value: r.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else out[r.key] = r.value;
  }
  return out;
}

/** ISO 8601 UTC with milliseconds; a corrupt time must not turn a lookup into a 500. */
function isoTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? new Date(0).toISOString() : d.toISOString();
}

/** Scores go out as integers 0..100 whatever arithmetic the ranker did. */
function wireScore(score: number): number {
  if (!Number.isFinite(score)) return 0;
  return Math.min(100, Math.max(0, Math.round(score)));
}

/**
 * Shapes a ranked domain into the wire record of the spec. `domain` and `fullQualifiedDomain` carry
 * the same name (the spec's two descriptions disagree on which one is present). Score details are
 * added only when `explain` is set and never change the other fields.
 *
 * @example shapeRecord(ranked, "forward", false).info.smartContractAddress // "0x…"
 */
export function shapeRecord(ranked: RankedDomain, mode: ShapeMode, explain: boolean): WireRecord {
  const d = ranked.domain;
  const info: WireInfo =
    mode === "forward"
      ? {
          sld: d.sld,
          tld: d.tld,
          smartContractAddress: d.contractAddress,
          lastUpdate: isoTime(d.lastUpdateAt),
          CSAMValidation: d.csamOk,
          KYC: d.kyc,
          tags: ranked.tags,
        }
      : {
          sld: d.sld,
          tld: d.tld,
          lastUpdate: isoTime(d.lastUpdateAt),
          CSAMValidation: d.csamOk,
          KYC: d.kyc,
          tags: ranked.tags,
        };
  const record: WireRecord = {
    info,
    records: buildRecordsMap(d.records),
    domain: d.name,
    fullQualifiedDomain: d.name,
    network: d.network,
    provider: d.provider,
    ownerAddress: d.owner,
    score: wireScore(ranked.score),
    spam: ranked.spam,
  };
  if (explain && mode === "forward") record.scoreDetails = ranked.details;
  if (ranked.provenance) record.provenance = ranked.provenance;
  return record;
}

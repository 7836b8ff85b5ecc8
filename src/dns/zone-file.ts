import type { RRset } from "./resource-records.js";
import type { Soa, ZoneApex } from "./zone.js";

/** The header comment that carries the progress a file's serial was derived from (serial.ts). */
export const PROGRESS_COMMENT = "; omniname-progress ";

function absolute(name: string): string {
  return name === "." || name.endsWith(".") ? name : `${name}.`;
}

/** One character-string in master-file form: quoted, `"` and `\` escaped, other bytes as \DDD. */
function quoted(chunk: Buffer): string {
  let out = '"';
  for (const b of chunk) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\${b.toString().padStart(3, "0")}`;
  }
  return `${out}"`;
}

/** One datum of an RRset in master-file presentation (RFC 1035 §5.1), names absolute. */
export function rdataPresentation(set: RRset, i: number): string {
  switch (set.type) {
    case "A":
    case "AAAA":
      return set.data[i];
    case "CNAME":
      return absolute(set.data[i]);
    case "MX":
      return `${set.data[i].preference} ${absolute(set.data[i].exchange)}`;
    case "TXT":
      return set.data[i].map(quoted).join(" ");
  }
}

/** An SOA's RDATA in master-file presentation. */
export function soaPresentation(s: Soa): string {
  return `${absolute(s.mname)} ${absolute(s.rname)} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`;
}

/** The master-file lines of one name's RRsets (RFC 1035 §5), owner names absolute. */
export function buildNodeLines(name: string, rrsets: readonly RRset[]): string {
  let out = "";
  const owner = absolute(name);
  for (const set of rrsets)
    for (let i = 0; i < set.data.length; i++)
      out += `${owner}\t${set.ttl}\tIN\t${set.type}\t${rdataPresentation(set, i)}\n`;
  return out;
}

/** The top of a zone's master file: provenance comment, SOA and NS. */
export function buildZoneHeader(zone: ZoneApex, progress: number): string {
  const origin = absolute(zone.origin);
  const s = zone.soa;
  const lines = [
    `; zone ${origin} written by omniname zone export`,
    `${PROGRESS_COMMENT}${progress} serial ${s.serial}`,
    `$ORIGIN ${origin}`,
    `${origin}\t${zone.ttl}\tIN\tSOA\t${soaPresentation(s)}`,
    ...zone.nameServers.map((ns) => `${origin}\t${zone.ttl}\tIN\tNS\t${absolute(ns)}`),
  ];
  return `${lines.join("\n")}\n`;
}

/** The serial state recorded in a file written before, or null when there is none. */
export function parseZoneHeader(text: string): { serial: number; progress: number } | null {
  const m = /^; omniname-progress (\d+) serial (\d+)$/m.exec(text);
  return m ? { progress: Number(m[1]), serial: Number(m[2]) } : null;
}

import dnsPacket from "dns-packet";
import type { Store } from "../store/store.js";
import type { RRset } from "./resource-records.js";
import type { Soa } from "./zone.js";
import { rdataPresentation, soaPresentation } from "./zone-file.js";

/** A query packet as a stub resolver sends it; `udpSize` adds an OPT record (EDNS(0)). */
export function buildTestQuery(
  name: string,
  type: string,
  opts: { id?: number; udpSize?: number; ednsVersion?: number; klass?: string; dnssecOk?: boolean } = {},
): Buffer {
  return dnsPacket.encode({
    type: "query",
    id: opts.id ?? 4242,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: type as never, class: (opts.klass ?? "IN") as never }],
    additionals:
      opts.udpSize === undefined
        ? []
        : [
            {
              type: "OPT",
              name: ".",
              udpPayloadSize: opts.udpSize,
              ednsVersion: opts.ednsVersion ?? 0,
              flags: opts.dnssecOk ? dnsPacket.DNSSEC_OK : 0,
            } as never,
          ],
  });
}

/** RDATA as a master file writes it: the zone file's own presentation, so the two cannot drift. */
function rdataText(a: dnsPacket.Answer): string {
  const d = (a as { data: unknown }).data;
  switch (a.type) {
    case "A":
    case "AAAA":
    case "CNAME":
    case "MX":
      return rdataPresentation({ type: a.type, data: [d], ttl: 0 } as RRset, 0);
    case "TXT":
      return rdataPresentation({ type: "TXT", data: [d as Buffer[]], ttl: 0 } as RRset, 0);
    case "SOA":
      return soaPresentation(d as Soa);
    default:
      return String(d);
  }
}

/** `name TTL IN TYPE rdata`, the way coredns test rows read. */
export function rrText(a: dnsPacket.Answer): string {
  return `${a.name}. ${(a as { ttl?: number }).ttl} IN ${a.type} ${rdataText(a)}`;
}

const RCODE_NAMES: Record<number, string> = {
  0: "NOERROR",
  1: "FORMERR",
  2: "SERVFAIL",
  3: "NXDOMAIN",
  4: "NOTIMP",
  5: "REFUSED",
  16: "BADVERS",
};

export interface DecodedAnswer {
  id: number;
  rcode: string;
  aa: boolean;
  tc: boolean;
  questions: string[];
  answer: string[];
  ns: string[];
  udpSize: number | null;
}

export function decodeTestAnswer(buf: Buffer): DecodedAnswer {
  const p = dnsPacket.decode(buf);
  const opt = (p.additionals ?? []).find((a) => a.type === "OPT") as
    | { udpPayloadSize: number; extendedRcode: number }
    | undefined;
  const rcode = ((opt?.extendedRcode ?? 0) << 4) | ((p.flags ?? 0) & 0xf);
  return {
    id: p.id ?? 0,
    rcode: RCODE_NAMES[rcode] ?? String(rcode),
    aa: Boolean(p.flag_aa),
    tc: Boolean(p.flag_tc),
    questions: (p.questions ?? []).map((q) => `${q.name} ${q.type}`),
    answer: (p.answers ?? []).map(rrText),
    ns: (p.authorities ?? []).map(rrText),
    udpSize: opt ? opt.udpPayloadSize : null,
  };
}

/** Sets one source's checkpoint: the index's progress the zone serial derives from (serial.ts). */
export async function setTestProgress(
  store: Pick<Store, "crawlerLog">,
  block: number,
  sourceId = "s",
): Promise<void> {
  await store.crawlerLog.setCheckpoint({
    sourceId,
    chainId: 1,
    blockNumber: block,
    blockHash: `0x${block}`,
    updatedAt: 1,
    state: "live",
    error: null,
  });
}

import {
  compactNextName,
  type DnssecSigner,
  nsecRdata,
  SIGNATURE_REFRESH_MS,
  TYPE_NSEC,
  TYPE_NXNAME,
  TYPE_RRSIG,
} from "./dnssec-sign.js";
import type { WireRR } from "./wire-response.js";
import { RCODE } from "./wire-query.js";
import { negativeTtl, type ZoneApex } from "./zone.js";

/** What a negative answer denies, for its NSEC record (docs/dns.md, "DNSSEC"). */
export interface Denial {
  /** The NSEC's owner on the wire: the question's name (pointer 12), or a name of a CNAME chain. */
  owner: 12 | string;
  /** That owner as a name (no trailing dot; its case does not matter). */
  name: string;
  /** The types the name has (NODATA), or null when it does not exist (NXDOMAIN). */
  types: number[] | null;
}

/** The sections of an answer, before they are written (query-handler.ts). */
export interface AnswerSections {
  rcode: number;
  aa: boolean;
  answers: WireRR[];
  authority: WireRR[];
  denial?: Denial;
}

export interface SignContext {
  zone: ZoneApex;
  signer: DnssecSigner;
  /** The question's name as sent (the owner of pointer 12). */
  qname: string;
  qtype: number;
  /** Narrowed to the first time a signature in the answer is made again. */
  report?: { validUntil: number };
}

function withLength(rdata: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(rdata.length, 0);
  return Buffer.concat([len, rdata]);
}

/**
 * Each RRset of a section followed by its RRSIGs. RRs of one RRset are consecutive (the handler
 * writes them so); an owner that is a pointer is the question name (12) or the zone's apex.
 */
function signSection(rrs: readonly WireRR[], ctx: SignContext): WireRR[] {
  const out: WireRR[] = [];
  for (let i = 0; i < rrs.length; ) {
    let end = i + 1;
    while (end < rrs.length && rrs[end].owner === rrs[i].owner && rrs[end].type === rrs[i].type) end++;
    const group = rrs.slice(i, end);
    i = end;
    out.push(...group);
    const first = group[0];
    const owner =
      first.owner === 12 ? ctx.qname : typeof first.owner === "number" ? ctx.zone.origin : first.owner;
    const sigs = ctx.signer.sign(ctx.zone.origin, {
      owner,
      type: first.type,
      ttl: first.ttl,
      rdatas: group.map((rr) => rr.rdata.subarray(2)),
    });
    for (const s of sigs) {
      out.push({ owner: first.owner, type: TYPE_RRSIG, ttl: first.ttl, rdata: withLength(s.rdata) });
      if (ctx.report)
        ctx.report.validUntil = Math.min(ctx.report.validUntil, s.signedAt + SIGNATURE_REFRESH_MS);
    }
  }
  return out;
}

/**
 * The DNSSEC form of an answer for a query with DO set: RRSIGs after every RRset, and for a
 * negative answer an NSEC of compact denial (RFC 9824): owned by the name itself, next name
 * `\000.name`, its bitmap the name's types (NODATA) or RRSIG, NSEC and NXNAME (the name does not
 * exist, answered NOERROR as the RFC says). No wildcards: no other proof is needed. A query for the
 * NSEC type gets that NSEC as its answer.
 */
export function signAnswer(answer: AnswerSections, ctx: SignContext): AnswerSections {
  const denial = answer.denial;
  if (denial === undefined) {
    return {
      ...answer,
      answers: signSection(answer.answers, ctx),
      authority: signSection(answer.authority, ctx),
    };
  }
  const types =
    denial.types === null ? [TYPE_RRSIG, TYPE_NSEC, TYPE_NXNAME] : [...denial.types, TYPE_RRSIG, TYPE_NSEC];
  const nsec: WireRR = {
    owner: denial.owner,
    type: TYPE_NSEC,
    ttl: negativeTtl(ctx.zone),
    rdata: withLength(nsecRdata(compactNextName(denial.name), types)),
  };
  if (ctx.qtype === TYPE_NSEC && denial.owner === 12)
    return {
      rcode: RCODE.NOERROR,
      aa: answer.aa,
      answers: [...signSection(answer.answers, ctx), ...signSection([nsec], ctx)],
      authority: [],
    };
  return {
    rcode: answer.rcode === RCODE.NXDOMAIN ? RCODE.NOERROR : answer.rcode,
    aa: answer.aa,
    answers: signSection(answer.answers, ctx),
    authority: [...signSection(answer.authority, ctx), ...signSection([nsec], ctx)],
  };
}

import type { Logger } from "pino";
import {
  errorTsig,
  RCODE_NOTAUTH,
  readTsig,
  ResponseSigner,
  type TsigKey,
  unsignedPart,
  verifyRequest,
} from "./tsig.js";
import { RCODE } from "./wire-query.js";
import { walkMessage } from "./xfr-wire.js";

const TYPE_OPT = 41;

/**
 * Whether a query may carry a TSIG (RFC 8945 §5.1: the last additional record). Cheap on the hot
 * path: no additional record, or a bare OPT record at the very end (a plain EDNS query), is no.
 */
export function mayBeSigned(msg: Buffer): boolean {
  if (msg.length < 12 || msg.readUInt16BE(10) === 0) return false;
  const n = msg.length;
  if (msg.readUInt16BE(10) === 1 && n >= 23 && msg[n - 11] === 0 && msg.readUInt16BE(n - 10) === TYPE_OPT)
    return false;
  return readTsig(msg).kind !== "none";
}

/**
 * Answers a signed ordinary query (a secondary's SOA check is signed with its transfer key): the
 * TSIG is checked as for a transfer, the query without it is answered by `answer`, and the answer
 * is signed with the request's MAC (RFC 8945 §5.3). A failed check is NOTAUTH with the TSIG error.
 */
export async function answerSignedQuery(
  msg: Buffer,
  keys: readonly TsigKey[],
  clock: () => number,
  answer: (unsigned: Buffer) => Promise<Buffer | null>,
  log?: Logger,
): Promise<Buffer | null> {
  if ((msg[2] & 0x80) !== 0) return null;
  const read = readTsig(msg);
  const id = msg.readUInt16BE(0);
  const question = walkMessage(msg)?.questions?.[0];
  const bare = (rcode: number): Buffer => {
    const h = Buffer.alloc(12);
    h.writeUInt16BE(id, 0);
    h.writeUInt16BE(0x8000 | ((msg[2] & 0x78) << 8) | (rcode & 0xf), 2);
    h.writeUInt16BE(question === undefined ? 0 : 1, 4);
    return question === undefined ? h : Buffer.concat([h, question.raw]);
  };
  if (read.kind !== "tsig") return bare(RCODE.FORMERR);
  const now = clock();
  const check = verifyRequest(msg, read.tsig, keys, now);
  if (!check.ok) {
    log?.warn({ key: read.tsig.key, tsigError: check.error }, "signed query: TSIG check failed");
    return errorTsig(bare(RCODE_NOTAUTH), check, now);
  }
  const response = await answer(unsignedPart(msg, read.tsig));
  if (response === null) return null;
  return new ResponseSigner(check.key, check.tsig.mac, check.tsig.originalId, clock).sign(response);
}

import { once } from "node:events";
import type { Socket } from "node:net";
import type { Logger } from "pino";
import {
  errorTsig,
  RCODE_NOTAUTH,
  readTsig,
  ResponseSigner,
  type TsigCheck,
  type TsigKey,
  verifyRequest,
} from "./tsig.js";
import { answerSignedQuery, mayBeSigned } from "./tsig-queries.js";
import { CLASS_IN, RCODE, TYPE } from "./wire-query.js";
import { nsBytes, soaBytes, soaSerialAt, walkMessage, type WalkedQuestion } from "./xfr-wire.js";
import type { XfrZones, ZoneVersion } from "./xfr-zones.js";

/** Bytes of RRs per transfer message (a message may hold up to 65,535 bytes). */
const MESSAGE_BYTES = 16_000;
/** Transfer requests one connection may have waiting behind the one served; one more closes it. */
const MAX_QUEUED = 4;

export interface XfrServiceOptions {
  zones: XfrZones;
  keys: readonly TsigKey[];
  clock: () => number;
  logger?: Logger;
}

/** The zone transfers on the DNS role's TCP connections (docs/dns.md, "Zone transfers"). */
export interface XfrService {
  /** Whether a TCP message asks for a transfer (one question, QTYPE AXFR or IXFR). */
  claims(message: Buffer): boolean;
  /** Answers a transfer request on the socket: the zone in signed messages, or one error. */
  serve(message: Buffer, socket: Socket): Promise<void>;
  /**
   * A query signed with TSIG (any type; a secondary's SOA check): its signed answer, `answer`
   * computing the answer to the query without its TSIG. Null when the message carries no TSIG or
   * no key is configured (then it is answered as any query).
   */
  answerSigned(
    message: Buffer,
    answer: (unsigned: Buffer) => Promise<Buffer | null>,
  ): Promise<Buffer | null> | null;
}

function questionTypeOf(msg: Buffer): number | null {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1 || (msg[2] & 0x80) !== 0 || ((msg[2] >> 3) & 0xf) !== 0)
    return null;
  let off = 12;
  for (let n = 0; n < 128 && off < msg.length; n++) {
    const len = msg[off];
    if (len === 0) return off + 3 <= msg.length ? msg.readUInt16BE(off + 1) : null;
    if (len > 63) return null;
    off += 1 + len;
  }
  return null;
}

/** A response header: the request's ID and opcode, QR and AA, `rcode`, and the counts. */
function header(id: number, rcode: number, qd: number, an: number): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(id, 0);
  h.writeUInt16BE(0x8000 | 0x0400 | (rcode & 0xf), 2);
  h.writeUInt16BE(qd, 4);
  h.writeUInt16BE(an, 6);
  return h;
}

function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(msg.length, 0);
  return Buffer.concat([len, msg]);
}

/** The RRs of a whole zone in AXFR order: SOA, NS, every name, SOA again (RFC 5936 §2.2). */
function* axfrRecords(v: ZoneVersion): Generator<Buffer> {
  const soa = soaBytes(v.apex.origin, v.apex.ttl, v.apex.soa);
  yield soa;
  for (const ns of v.apex.nameServers) yield nsBytes(v.apex.origin, v.apex.ttl, ns);
  for (const rrs of v.nodes.values()) yield* rrs;
  yield soa;
}

export function createXfrService(opts: XfrServiceOptions): XfrService {
  const log = opts.logger;

  async function send(socket: Socket, msg: Buffer): Promise<void> {
    if (socket.destroyed) throw new Error("closed");
    // A client that stops reading: the idle timeout closes the socket, and the transfer ends.
    if (!socket.write(frame(msg))) await Promise.race([once(socket, "drain"), once(socket, "close")]);
    if (socket.destroyed) throw new Error("closed");
  }

  /** Writes the RRs in messages of about MESSAGE_BYTES, the first with the question. */
  async function stream(
    socket: Socket,
    id: number,
    question: WalkedQuestion,
    records: Iterable<Buffer>,
    signer: ResponseSigner,
  ): Promise<number> {
    let batch: Buffer[] = [];
    let bytes = 0;
    let first = true;
    let messages = 0;
    const flush = async () => {
      const qd = first ? [question.raw] : [];
      await send(
        socket,
        signer.sign(Buffer.concat([header(id, RCODE.NOERROR, qd.length, batch.length), ...qd, ...batch])),
      );
      first = false;
      batch = [];
      bytes = 0;
      messages++;
    };
    for (const rr of records) {
      if (bytes + rr.length > MESSAGE_BYTES && batch.length > 0) await flush();
      batch.push(rr);
      bytes += rr.length;
    }
    if (batch.length > 0 || first) await flush();
    return messages;
  }

  async function serve(message: Buffer, socket: Socket): Promise<void> {
    const id = message.readUInt16BE(0);
    const walked = walkMessage(message);
    const question = walked?.questions?.[0];
    const bare = (rcode: number, q?: WalkedQuestion) =>
      send(socket, q ? Buffer.concat([header(id, rcode, 1, 0), q.raw]) : header(id, rcode, 0, 0));
    if (walked === null || question === undefined) return bare(RCODE.FORMERR);
    const tsigRead = readTsig(message);
    if (tsigRead.kind === "malformed") return bare(RCODE.FORMERR, question);
    // No transfer without a key: unsigned, or no key configured at all.
    if (tsigRead.kind === "none" || opts.keys.length === 0) {
      // At warn, as every refused transfer (docs/dns.md): a secondary left without its zone.
      log?.warn({ zone: question.name }, "zone transfer refused: not signed with a TSIG key");
      return bare(RCODE.REFUSED, question);
    }
    const now = opts.clock();
    const check: TsigCheck = verifyRequest(message, tsigRead.tsig, opts.keys, now);
    if (!check.ok) {
      log?.warn(
        { zone: question.name, key: tsigRead.tsig.key, tsigError: check.error },
        "zone transfer: TSIG check failed",
      );
      const refused = Buffer.concat([header(id, RCODE_NOTAUTH, 1, 0), question.raw]);
      return send(socket, errorTsig(refused, check, now));
    }
    const signer = new ResponseSigner(check.key, check.tsig.mac, check.tsig.originalId, opts.clock);
    const refuse = (rcode: number, reason: string) => {
      log?.warn({ zone: question.name, key: check.key.name, rcode }, `zone transfer refused: ${reason}`);
      return send(socket, signer.sign(Buffer.concat([header(id, rcode, 1, 0), question.raw])));
    };
    if (question.qclass !== CLASS_IN) return refuse(RCODE.REFUSED, "class other than IN");
    await opts.zones.refresh().catch((e) => log?.warn({ err: e }, "zone transfer: reading the zones failed"));
    const zone = opts.zones.zone(question.name);
    if (zone === null) return refuse(RCODE_NOTAUTH, "not a zone we serve");

    let records: Iterable<Buffer> = axfrRecords(zone);
    let kind = "AXFR";
    if (question.type === TYPE.IXFR) {
      const soas = walked.filter((r) => r.section === "authority");
      const soa =
        soas.length === 1 && soas[0].type === TYPE.SOA && soas[0].name === zone.apex.origin ? soas[0] : null;
      const serial = soa === null ? null : soaSerialAt(message, soa.rdata, soa.rdlength);
      if (serial === null) return refuse(RCODE.FORMERR, "IXFR without the zone's SOA");
      const current = zone.apex.soa.serial;
      const diffs = serial >= current ? [] : opts.zones.diffsSince(zone.apex.origin, serial);
      if (serial >= current) {
        // Up to date, or a serial from the future: our SOA alone says which serial we have.
        records = [soaBytes(zone.apex.origin, zone.apex.ttl, zone.apex.soa)];
        kind = "IXFR up to date";
      } else if (diffs !== null) {
        records = ixfrRecords(zone, diffs);
        kind = `IXFR from ${serial}`;
      } else kind = `IXFR from ${serial} as AXFR`;
    }
    const messages = await stream(socket, id, question, records, signer);
    log?.info(
      { zone: zone.apex.origin, serial: zone.apex.soa.serial, kind, messages, key: check.key.name },
      "zone transfer",
    );
  }

  // One transfer at a time per connection, in the order asked; a flood of requests closes it.
  const queues = new WeakMap<Socket, { tail: Promise<void>; waiting: number }>();
  return {
    claims: (message) => {
      const t = questionTypeOf(message);
      return t === TYPE.AXFR || t === TYPE.IXFR;
    },
    answerSigned: (message, answer) =>
      opts.keys.length === 0 || !mayBeSigned(message)
        ? null
        : answerSignedQuery(message, opts.keys, opts.clock, answer, log).catch(() => null),
    serve(message, socket) {
      let q = queues.get(socket);
      if (q === undefined) {
        q = { tail: Promise.resolve(), waiting: 0 };
        queues.set(socket, q);
      }
      if (q.waiting > MAX_QUEUED) {
        log?.warn("zone transfer: too many requests on one connection, closed");
        socket.destroy();
        return q.tail;
      }
      const queue = q;
      queue.waiting++;
      queue.tail = queue.tail
        .then(() => (socket.destroyed ? undefined : serve(message, socket)))
        .catch((e) => {
          log?.warn({ err: e }, "zone transfer failed");
          socket.destroy();
        })
        .finally(() => {
          queue.waiting--;
        });
      return queue.tail;
    },
  };
}

/** IXFR's difference sequences (RFC 1995 §4): current SOA, then per change old SOA, deletions, new SOA, additions, then the current SOA. */
function* ixfrRecords(
  zone: ZoneVersion,
  diffs: ReturnType<XfrZones["diffsSince"]> & object,
): Generator<Buffer> {
  const soa = soaBytes(zone.apex.origin, zone.apex.ttl, zone.apex.soa);
  yield soa;
  for (const d of diffs) {
    yield soaBytes(d.from.origin, d.from.ttl, d.from.soa);
    yield* d.deleted;
    yield soaBytes(d.to.origin, d.to.ttl, d.to.soa);
    yield* d.added;
  }
  yield soa;
}

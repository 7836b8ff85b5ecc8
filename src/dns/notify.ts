import { randomInt } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { isIPv6 } from "node:net";
import type { Logger } from "pino";
import { signRequest, type TsigKey, verifyResponse } from "./tsig.js";
import { TYPE } from "./wire-query.js";
import { soaBytes, wireName } from "./xfr-wire.js";
import type { ZoneApex } from "./zone.js";

const OPCODE_NOTIFY = 4;

export interface NotifyTarget {
  host: string;
  port: number;
}

/**
 * Parses `DNS_NOTIFY`: `host:port`, comma-separated (an IPv6 address in brackets: `[::1]:53`).
 *
 * @example parseNotifyTargets("127.0.0.1:5300, [::1]:53") // [{ host: "127.0.0.1", port: 5300 }, { host: "::1", port: 53 }]
 */
export function parseNotifyTargets(value: string): NotifyTarget[] {
  const out: NotifyTarget[] = [];
  for (const entry of value.split(",")) {
    const text = entry.trim();
    if (text === "") continue;
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text);
    const port = m ? Number(m[3]) : 0;
    if (!m || port < 1 || port > 65535) throw new Error(`DNS_NOTIFY: "${text}" is not host:port`);
    out.push({ host: m[1] ?? m[2], port });
  }
  return out;
}

/** A NOTIFY message for a zone (RFC 1996 §3.7): AA, the zone's SOA question and its new SOA. */
export function buildNotify(id: number, zone: ZoneApex): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(id, 0);
  h.writeUInt16BE((OPCODE_NOTIFY << 11) | 0x0400, 2);
  h.writeUInt16BE(1, 4);
  h.writeUInt16BE(1, 6);
  const q = Buffer.alloc(4);
  q.writeUInt16BE(TYPE.SOA, 0);
  q.writeUInt16BE(1, 2);
  return Buffer.concat([h, wireName(zone.origin), q, soaBytes(zone.origin, zone.ttl, zone.soa)]);
}

export interface NotifierOptions {
  targets: readonly NotifyTarget[];
  /** Signs every NOTIFY (the secondaries' `allow-notify` names it); null: unsigned. */
  key: TsigKey | null;
  clock: () => number;
  logger?: Logger;
  /** Sends of one NOTIFY before giving up, one every `retryMs` until answered. Default 5, 1,000 ms. */
  tries?: number;
  retryMs?: number;
}

export interface Notifier {
  /** Tells every secondary that the zone changed; resolves once each answered or gave up. */
  notify(zone: ZoneApex): Promise<void>;
  close(): void;
}

/**
 * NOTIFY (RFC 1996) over UDP from one socket per address family: each message is sent again
 * until its answer (same ID, QR, opcode NOTIFY, from the secondary's address) comes back.
 */
export function createNotifier(opts: NotifierOptions): Notifier {
  const sockets = new Map<string, Socket>();
  const waiting = new Map<string, (msg: Buffer) => void>();
  const socketFor = (family: "udp4" | "udp6"): Socket => {
    let s = sockets.get(family);
    if (s === undefined) {
      s = createSocket(family);
      s.on("message", (msg, rinfo) => {
        if (msg.length < 12 || (msg[2] & 0x80) === 0 || ((msg[2] >> 3) & 0xf) !== OPCODE_NOTIFY) return;
        waiting.get(`${rinfo.address}|${rinfo.port}|${msg.readUInt16BE(0)}`)?.(msg);
      });
      s.on("error", (e) => opts.logger?.warn({ err: e }, "notify socket error"));
      s.unref();
      sockets.set(family, s);
    }
    return s;
  };

  async function notifyOne(target: NotifyTarget, zone: ZoneApex): Promise<void> {
    const id = randomInt(0, 65536);
    const bare = buildNotify(id, zone);
    const signed = opts.key === null ? null : signRequest(bare, opts.key, opts.clock());
    const packet = signed?.packet ?? bare;
    const socket = socketFor(isIPv6(target.host) ? "udp6" : "udp4");
    const tag = `${target.host}|${target.port}|${id}`;
    const answered = new Promise<Buffer>((resolve) => waiting.set(tag, resolve));
    try {
      for (let i = 0; i < (opts.tries ?? 5); i++) {
        socket.send(packet, target.port, target.host);
        let timer: NodeJS.Timeout | undefined;
        const answer = await Promise.race([
          answered,
          new Promise<null>((r) => {
            timer = setTimeout(() => r(null), opts.retryMs ?? 1000);
          }),
        ]);
        clearTimeout(timer);
        if (answer === null) continue;
        const rcode = answer[3] & 0xf;
        const trusted = opts.key === null || signed === null || verifyResponse(answer, opts.key, signed.mac);
        opts.logger?.info(
          {
            zone: zone.origin,
            serial: zone.soa.serial,
            secondary: `${target.host}:${target.port}`,
            rcode,
            signed: trusted,
          },
          "notify answered",
        );
        return;
      }
      opts.logger?.warn(
        { zone: zone.origin, secondary: `${target.host}:${target.port}` },
        "notify not answered",
      );
    } finally {
      waiting.delete(tag);
    }
  }

  return {
    async notify(zone) {
      await Promise.all(opts.targets.map((t) => notifyOne(t, zone)));
    },
    close() {
      for (const s of sockets.values()) s.close();
      sockets.clear();
    },
  };
}

import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { lookup as dnsLookup, type LookupOneOptions } from "node:dns";
import { createServer, isIP, isIPv6, type Server, type Socket } from "node:net";
import type { RemoteInfo } from "node:dgram";
import type { Logger } from "pino";
import type { AnswerCache } from "./answer-cache.js";
import type { XfrService } from "./xfr-server.js";
import { answerQuery, type Transport } from "./query-handler.js";
import {
  openUdpBatch,
  type UdpBatchBinding,
  type UdpBatchSocket,
  type UdpBatchStats,
  usableUdpBatch,
} from "./udp-batch.js";
import type { ZoneLookup } from "./zone.js";

export interface DnsServerOptions {
  lookup: ZoneLookup;
  host: string;
  /** 0: the system picks a free port for TCP, and UDP binds the same one. */
  port: number;
  /** A TCP connection without a complete query for this long is closed (RFC 7766 §6.2.3). */
  tcpIdleMs: number;
  /** Concurrent TCP connections; a connection beyond it is closed at once. */
  tcpMaxClients: number;
  logger?: Logger;
  /** Repeated queries answered from here (answer-cache.ts); without it every query is computed. */
  cache?: AnswerCache | null;
  /** Zone transfers (AXFR, IXFR) on TCP (xfr-server.ts); without it they are REFUSED. */
  xfr?: XfrService | null;
  /**
   * UDP through the batched addon (udp-batch.ts: recvmmsg/sendmmsg on a SO_REUSEPORT socket of
   * this process) when it loads and the host is an IP address; false: node:dgram (DNS_UDP_BATCH).
   * Default true.
   */
  udpBatch?: boolean;
  /**
   * The UDP socket the dns role's primary bound, inherited at this descriptor (`shareUdpSocket`):
   * the batched path reads it instead of binding its own. Only with the batched path.
   */
  udpFd?: number;
}

/** How this server reads UDP: `batch` (the addon) or `dgram` (node:dgram; why, in the log). */
export type UdpPath = "batch" | "dgram";

export interface DnsServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** What createDnsServer gives: the server and how it reads UDP. */
export interface DnsUdpServer extends DnsServer {
  udpPath: UdpPath;
  /** The batched socket's counters; null on the dgram path. */
  udpStats(): UdpBatchStats | null;
}

/**
 * The UDP socket's address lookup: a client's address is always an IP literal, given back at once
 * (dgram's default, dns.lookup, answers even a literal on the next tick: a closure and a tick per
 * answer sent). The last literal is remembered, so that a client sending many queries costs one
 * string comparison a query, not a parse. A host name (DNS_HOST) still goes through dns.lookup.
 */
function literalLookup(): (
  host: string,
  family: number | LookupOneOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
) => void {
  let last = "";
  let lastVersion = 0;
  return (host, family, callback) => {
    if (host !== last) {
      const version = isIP(host);
      if (version === 0) {
        dnsLookup(host, family as LookupOneOptions, callback);
        return;
      }
      last = host;
      lastVersion = version;
    }
    callback(null, host, lastVersion);
  };
}

/** Queries one TCP connection may have in flight before it is read no further (back-pressure). */
const MAX_PIPELINED = 32;

/** The answer to one query not answered from the cache: computed (and kept when there is a cache). */
function answerOf(packet: Buffer, opts: DnsServerOptions, transport: Transport): Promise<Buffer | null> {
  const cache = opts.cache;
  if (cache === undefined || cache === null) return answerQuery(packet, opts.lookup, transport);
  return cache.answer(packet, transport);
}

/** One DNS-over-TCP connection (RFC 7766): also the DoT server's, once its TLS handshake is done. */
export function serveTcpConnection(socket: Socket, opts: DnsServerOptions): void {
  let pending: Buffer = Buffer.alloc(0);
  let inFlight = 0;
  socket.setNoDelay(true);
  socket.setTimeout(opts.tcpIdleMs, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    // Each message is a 2-byte length and that many bytes (RFC 1035 §4.2.2); a partial one waits.
    while (pending.length >= 2) {
      const len = pending.readUInt16BE(0);
      if (pending.length < 2 + len) break;
      const message = pending.subarray(2, 2 + len);
      pending = pending.subarray(2 + len);
      // A zone transfer is answered on this connection in as many messages as it takes.
      if (opts.xfr?.claims(message)) {
        void opts.xfr.serve(Buffer.from(message), socket);
        continue;
      }
      // A cached answer is written at once (see the UDP path for why the cache comes first).
      const hit = opts.cache?.get(message, "tcp") ?? null;
      if (hit !== null) {
        socket.write(framed(hit));
        continue;
      }
      const query = Buffer.from(message);
      inFlight++;
      if (inFlight >= MAX_PIPELINED) socket.pause();
      // A query signed with TSIG gets a signed answer (xfr-server.ts), never a cached one.
      const signed = opts.xfr?.answerSigned(query, (m) => answerQuery(m, opts.lookup, "tcp")) ?? null;
      void (signed ?? answerOf(query, opts, "tcp")).then((answer) => {
        inFlight--;
        if (socket.destroyed) return;
        if (answer !== null) socket.write(framed(answer));
        if (inFlight < MAX_PIPELINED && socket.isPaused()) socket.resume();
      });
    }
  });
}

/** A DNS message with its 2-byte length in front (RFC 1035 §4.2.2). */
function framed(answer: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(2 + answer.length);
  frame.writeUInt16BE(answer.length, 0);
  answer.copy(frame, 2);
  return frame;
}

export function listenTcp(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port }, () => {
      server.off("error", reject);
      const addr = server.address();
      resolve(typeof addr === "object" && addr !== null ? addr.port : port);
    });
  });
}

function bindUdp(socket: UdpSocket, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind({ address: host, port }, () => {
      socket.off("error", reject);
      resolve();
    });
  });
}

/** The UDP socket's receive buffer asked of the kernel (capped by net.core.rmem_max). */
export const UDP_RECV_BUFFER = 4 * 1024 * 1024;

/** The batched addon when this server may and can use it, else null and why not. */
function udpPathOf(opts: DnsServerOptions): { binding: UdpBatchBinding | null; reason: string } {
  const usable = usableUdpBatch(opts.udpBatch, opts.host);
  if (usable.binding === null) return usable;
  return {
    binding: usable.binding,
    reason:
      opts.udpFd === undefined
        ? "recvmmsg/sendmmsg on a SO_REUSEPORT socket of this process"
        : "recvmmsg/sendmmsg on the socket the primary bound (shared by the workers)",
  };
}

/** The node:dgram path: one datagram a callback, one send a datagram. */
async function listenDgram(
  opts: DnsServerOptions,
  port: number,
  recvBufferSize: number,
  answerNow: (msg: Buffer) => Buffer | null,
  answerLater: (msg: Buffer) => Promise<Buffer | null>,
): Promise<UdpSocket> {
  const udp = createSocket({
    type: isIPv6(opts.host) ? "udp6" : "udp4",
    recvBufferSize,
    lookup: literalLookup(),
  });
  const reply = (answer: Buffer | null, rinfo: RemoteInfo) => {
    if (answer !== null) udp.send(answer, rinfo.port, rinfo.address);
  };
  udp.on("message", (msg, rinfo) => {
    const hit = answerNow(msg);
    if (hit !== null) {
      udp.send(hit, rinfo.port, rinfo.address);
      return;
    }
    void answerLater(msg).then((answer) => reply(answer, rinfo));
  });
  // A send to an unreachable client must not take the server down.
  udp.on("error", (e) => opts.logger?.warn({ err: e }, "dns udp error"));
  await bindUdp(udp, opts.host, port);
  return udp;
}

/**
 * The authoritative server over UDP and TCP on one address and port. Every packet goes through
 * `answerQuery`, which never throws; a socket error closes that connection only.
 *
 * @example const dns = await createDnsServer({ lookup, host: "127.0.0.1", port: 8053, tcpIdleMs: 10_000, tcpMaxClients: 256 });
 */
export async function createDnsServer(opts: DnsServerOptions): Promise<DnsUdpServer> {
  const clients = new Set<Socket>();
  const tcp = createServer((socket) => {
    if (clients.size >= opts.tcpMaxClients) {
      socket.destroy();
      return;
    }
    clients.add(socket);
    socket.on("close", () => clients.delete(socket));
    serveTcpConnection(socket, opts);
  });
  const port = await listenTcp(tcp, opts.host, opts.port);

  // A larger receive buffer absorbs bursts that would otherwise be dropped by the kernel (the
  // system caps it at net.core.rmem_max).
  const recvBufferSize = UDP_RECV_BUFFER;
  const cache = opts.cache ?? null;
  const compute = (m: Buffer) => answerQuery(m, opts.lookup, "udp");
  // A cached answer goes out at once: no promise, no closure. A query that answerSigned claims is
  // never kept (it is computed below without the cache), so checking the cache first answers every
  // query as before.
  const answerNow = (msg: Buffer) => (cache !== null ? cache.get(msg, "udp") : null);
  // A query signed with TSIG gets a signed answer (xfr-server.ts), never a cached one.
  const answerLater = (msg: Buffer) =>
    opts.xfr?.answerSigned(msg, compute) ?? (cache !== null ? cache.answer(msg, "udp") : compute(msg));

  const path = udpPathOf(opts);
  let batched: UdpBatchSocket | null = null;
  let udp: UdpSocket | null = null;
  try {
    if (path.binding !== null) {
      batched = openUdpBatch(path.binding, {
        host: opts.host,
        port,
        recvBufferSize,
        answerNow,
        answerLater,
        onError: (e) => opts.logger?.warn({ err: e }, "dns udp error"),
        fd: opts.udpFd,
      });
    } else {
      udp = await listenDgram(opts, port, recvBufferSize, answerNow, answerLater);
    }
  } catch (e) {
    tcp.close();
    throw e;
  }
  const udpPath: UdpPath = batched !== null ? "batch" : "dgram";
  opts.logger?.info({ udpPath, reason: path.reason }, `dns udp path: ${udpPath}`);

  return {
    host: opts.host,
    port,
    udpPath,
    udpStats: () => batched?.stats() ?? null,
    async close() {
      for (const c of clients) c.destroy();
      await Promise.all([
        new Promise<void>((r) => tcp.close(() => r())),
        batched?.close(),
        udp !== null ? new Promise<void>((r) => udp?.close(() => r())) : undefined,
      ]);
    },
  };
}

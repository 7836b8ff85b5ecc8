import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { isIPv6 } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import type { Logger } from "pino";
import type { AnswerCache } from "./answer-cache.js";
import type { XfrService } from "./xfr-server.js";
import { answerQuery, type Transport } from "./query-handler.js";
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
}

export interface DnsServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Queries one TCP connection may have in flight before it is read no further (back-pressure). */
const MAX_PIPELINED = 32;

/** The answer to one query: from the cache when it holds it, else computed (and kept). */
function answerOf(packet: Buffer, opts: DnsServerOptions, transport: Transport): Promise<Buffer | null> {
  const cache = opts.cache;
  if (cache === undefined || cache === null) return answerQuery(packet, opts.lookup, transport);
  const hit = cache.get(packet, transport);
  return hit !== null ? Promise.resolve(hit) : cache.answer(packet, transport);
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
      inFlight++;
      if (inFlight >= MAX_PIPELINED) socket.pause();
      const query = Buffer.from(message);
      // A query signed with TSIG gets a signed answer (xfr-server.ts), never a cached one.
      const signed = opts.xfr?.answerSigned(query, (m) => answerQuery(m, opts.lookup, "tcp")) ?? null;
      void (signed ?? answerOf(query, opts, "tcp")).then((answer) => {
        inFlight--;
        if (socket.destroyed) return;
        if (answer !== null) {
          const frame = Buffer.alloc(2 + answer.length);
          frame.writeUInt16BE(answer.length, 0);
          answer.copy(frame, 2);
          socket.write(frame);
        }
        if (inFlight < MAX_PIPELINED && socket.isPaused()) socket.resume();
      });
    }
  });
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

/**
 * The authoritative server over UDP and TCP on one address and port. Every packet goes through
 * `answerQuery`, which never throws; a socket error closes that connection only.
 *
 * @example const dns = await createDnsServer({ lookup, host: "127.0.0.1", port: 8053, tcpIdleMs: 10_000, tcpMaxClients: 256 });
 */
export async function createDnsServer(opts: DnsServerOptions): Promise<DnsServer> {
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
  const udp = createSocket({ type: isIPv6(opts.host) ? "udp6" : "udp4", recvBufferSize: 4 * 1024 * 1024 });
  const cache = opts.cache ?? null;
  udp.on("message", (msg, rinfo) => {
    // A query signed with TSIG gets a signed answer (xfr-server.ts), never a cached one.
    const signed = opts.xfr?.answerSigned(msg, (m) => answerQuery(m, opts.lookup, "udp")) ?? null;
    if (signed !== null) {
      void signed.then((answer) => {
        if (answer !== null) udp.send(answer, rinfo.port, rinfo.address);
      });
      return;
    }
    // A cached answer goes out in the same tick: no promise, no lookup.
    const hit = cache?.get(msg, "udp") ?? null;
    if (hit !== null) {
      udp.send(hit, rinfo.port, rinfo.address);
      return;
    }
    const computed = cache !== null ? cache.answer(msg, "udp") : answerQuery(msg, opts.lookup, "udp");
    void computed.then((answer) => {
      if (answer !== null) udp.send(answer, rinfo.port, rinfo.address);
    });
  });
  // A send to an unreachable client must not take the server down.
  udp.on("error", (e) => opts.logger?.warn({ err: e }, "dns udp error"));
  try {
    await bindUdp(udp, opts.host, port);
  } catch (e) {
    tcp.close();
    throw e;
  }

  return {
    host: opts.host,
    port,
    async close() {
      for (const c of clients) c.destroy();
      await Promise.all([
        new Promise<void>((r) => tcp.close(() => r())),
        new Promise<void>((r) => udp.close(() => r())),
      ]);
    },
  };
}

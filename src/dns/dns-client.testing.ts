import { createSocket, type Socket } from "node:dgram";
import type { Socket as NetSocket } from "node:net";

/**
 * A UDP client for tests and the benchmark: sends a packet to host:port and resolves with the
 * answer carrying the same ID. One socket, any number of sequential or concurrent queries.
 */
export interface UdpDnsClient {
  ask(packet: Buffer): Promise<Buffer>;
  close(): void;
}

export function createUdpDnsClient(host: string, port: number): UdpDnsClient {
  const socket: Socket = createSocket("udp4");
  const waiting = new Map<number, (b: Buffer) => void>();
  socket.on("message", (msg) => {
    if (msg.length < 2) return;
    const id = msg.readUInt16BE(0);
    const w = waiting.get(id);
    if (w) {
      waiting.delete(id);
      w(msg);
    }
  });
  return {
    ask(packet) {
      const id = packet.readUInt16BE(0);
      return new Promise((resolve, reject) => {
        waiting.set(id, resolve);
        socket.send(packet, port, host, (e) => {
          if (e) {
            waiting.delete(id);
            reject(e);
          }
        });
      });
    },
    close() {
      socket.close();
    },
  };
}

/** A DNS message with its 2-byte length, as DNS over TCP and TLS carry it (RFC 1035 §4.2.2). */
export function tcpFrame(packet: Buffer): Buffer {
  const f = Buffer.alloc(2 + packet.length);
  f.writeUInt16BE(packet.length, 0);
  packet.copy(f, 2);
  return f;
}

/**
 * The messages a TCP or TLS stream receives, one by one, then "closed" once the peer closed it;
 * `closedAt` is when (Date.now()), or null while it is open.
 */
export function readFrames(socket: NetSocket): {
  next: () => Promise<Buffer | "closed">;
  closedAt: () => number | null;
} {
  let buf = Buffer.alloc(0);
  let closedAt: number | null = null;
  const frames: Buffer[] = [];
  const waiters: Array<(v: Buffer | "closed") => void> = [];
  socket.on("data", (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      const f = buf.subarray(2, 2 + buf.readUInt16BE(0));
      buf = buf.subarray(2 + f.length);
      const w = waiters.shift();
      if (w) w(f);
      else frames.push(f);
    }
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    closedAt = Date.now();
    for (const w of waiters.splice(0)) w("closed");
  });
  return {
    next: () => {
      const f = frames.shift();
      if (f) return Promise.resolve(f);
      return closedAt !== null ? Promise.resolve("closed") : new Promise((r) => waiters.push(r));
    },
    closedAt: () => closedAt,
  };
}

import { createSocket, type Socket } from "node:dgram";

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

import type { Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import type { Logger } from "pino";
import type { Config } from "../config/config.schema.js";
import { readTlsCredentials, type TlsCredentials, watchTlsCredentials } from "../config/tls-credentials.js";
import { type DnsServerOptions, listenTcp, serveTcpConnection } from "./dns-server.js";

export interface DotServerOptions extends Omit<DnsServerOptions, "logger"> {
  credentials: TlsCredentials;
  /** A client that has not finished its TLS handshake this long after connecting is disconnected. */
  handshakeTimeoutMs: number;
  logger?: Logger;
}

export interface DotServer {
  host: string;
  port: number;
  /** Serves another certificate to new connections (a renewal); open ones keep theirs. */
  setCredentials(creds: TlsCredentials): void;
  close(): Promise<void>;
}

/**
 * DNS-over-TLS (RFC 7858): the DNS-over-TCP framing and query handling of `dns-server.ts` inside
 * TLS 1.2+ on its own port. Whatever is not a TLS client (plain DNS, a handshake cut short or
 * never finished) is closed before any DNS is read; after the handshake a connection is exactly a
 * TCP one (idle timeout, pipelining, the same answers and cache).
 *
 * @example const dot = await createDotServer({ lookup, host: "127.0.0.1", port: 8853, credentials, handshakeTimeoutMs: 10_000, tcpIdleMs: 10_000, tcpMaxClients: 256 });
 */
export async function createDotServer(opts: DotServerOptions): Promise<DotServer> {
  const sockets = new Set<Socket>();
  const server = createTlsServer({
    cert: opts.credentials.cert,
    key: opts.credentials.key,
    minVersion: "TLSv1.2",
    // "dot" is DNS-over-TLS's ALPN id (IANA); a client that offers none is served too.
    ALPNProtocols: ["dot"],
    handshakeTimeout: opts.handshakeTimeoutMs,
  });
  // Counted from the TCP connection, not from the end of the handshake: connections that never
  // finish theirs take places too, so they cannot pile up past the cap.
  server.maxConnections = opts.tcpMaxClients;
  server.on("connection", (raw: Socket) => {
    sockets.add(raw);
    raw.on("close", () => sockets.delete(raw));
    raw.on("error", () => raw.destroy());
  });
  server.on("secureConnection", (socket: TLSSocket) => serveTcpConnection(socket, opts));
  // A failed or timed-out handshake (plain DNS on this port, a port scan, a stalled client): Node
  // destroys that socket; the server goes on. Logged at debug: it is the client's doing.
  server.on("tlsClientError", (err, socket) => {
    opts.logger?.debug({ err: err.message }, "dns tls handshake failed");
    socket.destroy();
  });
  const port = await listenTcp(server, opts.host, opts.port);
  return {
    host: opts.host,
    port,
    setCredentials(creds) {
      server.setSecureContext({ cert: creds.cert, key: creds.key });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * The dns role's DoT server when TLS_CERT_FILE and TLS_KEY_FILE are set (null otherwise), on
 * DNS_HOST:DNS_TLS_PORT, sharing the UDP/TCP server's lookup and answer cache; the certificate is
 * re-read when its files change (tls-credentials.ts).
 */
export async function startDotServer(
  config: Config,
  server: Omit<DnsServerOptions, "port">,
): Promise<DotServer | null> {
  const credentials = readTlsCredentials(config);
  if (credentials === null) return null;
  const dot = await createDotServer({
    ...server,
    port: config.dnsTlsPort,
    credentials,
    handshakeTimeoutMs: config.tlsHandshakeTimeoutMs,
  });
  const stop = watchTlsCredentials(
    config,
    (creds) => {
      dot.setCredentials(creds);
      server.logger?.info({ cert: config.tlsCertFile }, "TLS certificate reloaded");
    },
    (e) =>
      server.logger?.warn({ err: e }, "TLS certificate change not loaded: the previous one is still served"),
  );
  return {
    ...dot,
    async close() {
      stop();
      await dot.close();
    },
  };
}

import type { Http2SecureServer } from "node:http2";
import type { FastifyHttp2SecureOptions, FastifyInstance } from "fastify";
import type { Config } from "../config/config.schema.js";
import { type TlsCredentials, watchTlsCredentials } from "../config/tls-credentials.js";

/**
 * Fastify's server options for TLS: HTTP/2 (DoH over HTTP/2, as RFC 8484 recommends) with
 * HTTP/1.1 kept for the clients that offer only it, chosen by ALPN (`allowHTTP1`). Empty without
 * credentials: plain HTTP/1.1, as before. (Typed `object`: Fastify's overloads pick the server
 * type from literal options, and the app is one type whichever it is.)
 */
export function httpsServerOptions(
  config: Pick<Config, "tlsHandshakeTimeoutMs">,
  creds: TlsCredentials | null,
): object {
  if (creds === null) return {};
  return {
    http2: true,
    https: {
      cert: creds.cert,
      key: creds.key,
      allowHTTP1: true,
      // A client that connects and never finishes its handshake is disconnected.
      handshakeTimeout: config.tlsHandshakeTimeoutMs,
      // TLS 1.2 and 1.3 only (RFC 8996 retired the older versions; RFC 8484 wants h2's TLS 1.2+).
      minVersion: "TLSv1.2",
    },
  } satisfies Pick<FastifyHttp2SecureOptions<Http2SecureServer>, "http2" | "https">;
}

/** Re-reads the certificate files when they change (tls-credentials.ts) while the app is open. */
export function reloadCertificatesOnChange(app: FastifyInstance, config: Config): void {
  const server = app.server as unknown as { setSecureContext(c: TlsCredentials): void };
  const stop = watchTlsCredentials(
    config,
    (creds) => {
      server.setSecureContext(creds);
      app.log.info({ cert: config.tlsCertFile }, "TLS certificate reloaded");
    },
    (e) => app.log.warn({ err: e }, "TLS certificate change not loaded: the previous one is still served"),
  );
  app.addHook("onClose", async () => stop());
}

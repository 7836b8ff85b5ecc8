import { Type } from "@sinclair/typebox";

/**
 * The settings of the encrypted transports (HTTPS and HTTP/2 for the API and DoH, DNS-over-TLS)
 * and of the DNS role's processes, spread into ConfigSchema (config.schema.ts) after the DNS
 * settings. Kept apart so that config.schema.ts stays one screenful per area.
 */
export const TRANSPORT_SETTINGS = {
  tlsCertFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "TLS_CERT_FILE",
      description:
        "PEM certificate chain: with TLS_KEY_FILE, the HTTP server speaks HTTPS and HTTP/2 and the dns role serves DNS-over-TLS; re-read when it changes",
    }),
  ),
  tlsKeyFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "TLS_KEY_FILE",
      description: "PEM private key of TLS_CERT_FILE (the file stays secret; its path is logged)",
    }),
  ),
  tlsHandshakeTimeoutMs: Type.Integer({
    minimum: 100,
    maximum: 120_000,
    default: 10_000,
    env: "TLS_HANDSHAKE_TIMEOUT_MS",
    description:
      "A TLS client that has not finished its handshake this long after connecting is disconnected",
  }),
  dnsTlsPort: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 8853,
    env: "DNS_TLS_PORT",
    description: "DNS-over-TLS port of the dns role (RFC 7858; 853 in production), when TLS_CERT_FILE is set",
  }),
  dnsWorkers: Type.Integer({
    minimum: 0,
    maximum: 256,
    default: 0,
    env: "DNS_WORKERS",
    description:
      "Processes of the dns role sharing its ports (UDP, TCP, TLS); 0: one per core; 1: in the process of omniname start",
  }),
  dnsUdpBatch: Type.Boolean({
    default: true,
    env: "DNS_UDP_BATCH",
    description:
      "UDP of the dns role through the batched addon (recvmmsg/sendmmsg; DNS workers read one socket their primary bound; Linux; built by npm run build) when it loads; false: node:dgram. The path taken is logged at start (docs/dns.md)",
  }),
  dnssec: Type.Boolean({
    default: false,
    env: "DNSSEC",
    description:
      "Sign the zones (algorithm 13, ECDSA P-256): DNSKEY at each apex, RRSIGs and compact denial of existence for queries with DO set, signed `zone export` files (docs/dns.md, DNSSEC)",
  }),
  dnssecKeyFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "DNSSEC_KEY_FILE",
      description:
        "PEM file of the DNSSEC keys (PKCS#8, P-256; the first signs, every key is published); absent: DATA_DIR/dnssec.key, generated on first use (mode 0600). The file stays secret; its path is logged",
    }),
  ),
};

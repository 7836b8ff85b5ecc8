import { readFileSync, type StatWatcher, unwatchFile, watchFile } from "node:fs";
import { createSecureContext } from "node:tls";
import { AppError } from "../domain/errors.js";
import type { Config } from "./config.schema.js";

/** A certificate chain and its private key, PEM, as the TLS servers take them. */
export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

type TlsFiles = Pick<Config, "tlsCertFile" | "tlsKeyFile">;

/**
 * The pair of TLS_CERT_FILE and TLS_KEY_FILE, read and checked (a key that does not match its
 * certificate fails here, at start-up, not at the first handshake); null when neither is set.
 *
 * @example const tls = readTlsCredentials(config); // null: plain HTTP, no DNS-over-TLS
 */
export function readTlsCredentials(config: TlsFiles): TlsCredentials | null {
  const { tlsCertFile: certFile, tlsKeyFile: keyFile } = config;
  // Both or neither: loadConfig refuses one without the other.
  if (certFile === undefined || keyFile === undefined) return null;
  const read = (file: string, variable: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new AppError(
        "CONFIG_INVALID",
        `Invalid configuration ${variable}: cannot read ${file}: ${(e as Error).message}`,
        {
          details: { variable },
        },
      );
    }
  };
  const creds = { cert: read(certFile, "TLS_CERT_FILE"), key: read(keyFile, "TLS_KEY_FILE") };
  try {
    createSecureContext(creds);
  } catch (e) {
    throw new AppError(
      "CONFIG_INVALID",
      `Invalid configuration TLS_CERT_FILE: ${certFile} and ${keyFile} are no PEM certificate and matching key (${(e as Error).message})`,
      { details: { variable: "TLS_CERT_FILE" } },
    );
  }
  return creds;
}

/** How often the certificate files are checked for a change: a renewal is served within this. */
export const TLS_RELOAD_CHECK_MS = 10_000;

/**
 * Calls `apply` with the new pair whenever TLS_CERT_FILE or TLS_KEY_FILE changes (checked every
 * `intervalMs`), so a renewed certificate is served without a restart: new connections get it,
 * open ones keep theirs. A pair that does not load (a half-written renewal, a key that does not
 * match yet) goes to `onError` and the servers keep the pair they have. Returns the stop function.
 */
export function watchTlsCredentials(
  config: TlsFiles,
  apply: (creds: TlsCredentials) => void,
  onError: (e: unknown) => void,
  intervalMs = TLS_RELOAD_CHECK_MS,
): () => void {
  const files = [config.tlsCertFile, config.tlsKeyFile].filter((f): f is string => f !== undefined);
  const changed = () => {
    try {
      const creds = readTlsCredentials(config);
      if (creds !== null) apply(creds);
    } catch (e) {
      onError(e);
    }
  };
  const watchers: StatWatcher[] = files.map((f) =>
    watchFile(f, { interval: intervalMs, persistent: false }, changed),
  );
  return () => {
    for (const f of files) unwatchFile(f, changed);
    watchers.length = 0;
  };
}

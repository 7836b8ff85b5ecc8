import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
  /** SHA-256 fingerprint as Node's X509Certificate gives it (AA:BB:…). */
  fingerprint256: string;
}

/**
 * A throwaway self-signed certificate (ECDSA P-256, one day) for 127.0.0.1, localhost and
 * `names`, written by openssl into `dir` as `<prefix>cert.pem` and `<prefix>key.pem`.
 */
export function makeTestCertificate(
  dir: string,
  names: readonly string[] = [],
  prefix = "",
): TestCertificate {
  const certFile = join(dir, `${prefix}cert.pem`);
  const keyFile = join(dir, `${prefix}key.pem`);
  const san = ["IP:127.0.0.1", "DNS:localhost", ...names.map((n) => `DNS:${n}`)].join(",");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      `subjectAltName=${san}`,
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ],
    { stdio: "ignore" },
  );
  const out = execFileSync("openssl", ["x509", "-in", certFile, "-noout", "-fingerprint", "-sha256"], {
    encoding: "utf8",
  });
  return {
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    fingerprint256: out.trim().replace(/^.*=/, ""),
  };
}

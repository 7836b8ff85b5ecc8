import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestCertificate, type TestCertificate } from "../../test/helpers/tls-cert.js";
import { readTlsCredentials } from "./tls-credentials.js";

describe("readTlsCredentials: the pair is checked at start-up", () => {
  let dir: string;
  let a: TestCertificate;
  let b: TestCertificate;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "omniname-tls-"));
    a = makeTestCertificate(dir, [], "a-");
    b = makeTestCertificate(dir, [], "b-");
    writeFileSync(join(dir, "junk.pem"), "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n");
    copyFileSync(a.keyFile, join(dir, "copy-key.pem"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("neither set: null (plain HTTP, no DNS-over-TLS)", () => {
    expect(readTlsCredentials({})).toBeNull();
  });

  it("a certificate and its key: the PEM bytes", () => {
    const creds = readTlsCredentials({ tlsCertFile: a.certFile, tlsKeyFile: join(dir, "copy-key.pem") });
    expect(creds?.cert.equals(a.cert)).toBe(true);
    expect(creds?.key.equals(a.key)).toBe(true);
  });

  it.each([
    [
      "a missing certificate file",
      () => ({ tlsCertFile: join(dir, "none.pem"), tlsKeyFile: a.keyFile }),
      /TLS_CERT_FILE: cannot read/,
    ],
    [
      "a missing key file",
      () => ({ tlsCertFile: a.certFile, tlsKeyFile: join(dir, "none.pem") }),
      /TLS_KEY_FILE: cannot read/,
    ],
    [
      "a certificate that is no PEM",
      () => ({ tlsCertFile: join(dir, "junk.pem"), tlsKeyFile: a.keyFile }),
      /no PEM certificate and matching key/,
    ],
    [
      "the key of another certificate",
      () => ({ tlsCertFile: a.certFile, tlsKeyFile: b.keyFile }),
      /no PEM certificate and matching key/,
    ],
    [
      "a certificate as its own key",
      () => ({ tlsCertFile: a.certFile, tlsKeyFile: a.certFile }),
      /no PEM certificate and matching key/,
    ],
  ])("%s: CONFIG_INVALID naming the variable", (_label, files, message) => {
    expect(() => readTlsCredentials(files())).toThrow(message);
  });
});

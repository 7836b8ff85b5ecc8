import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { connect as connectTls } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";
import { makeTestCertificate, type TestCertificate } from "../helpers/tls-cert.js";
import { createTestApp, type TestApp } from "./helpers/test-app.js";

const run = promisify(execFile);
const HANDSHAKE_MS = 400;

/** curl's status line: `<code> <http version>`, then the body. */
async function curl(...args: string[]): Promise<{ status: string; body: string; stderr: string }> {
  const { stdout, stderr } = await run("curl", [
    "-sS",
    "--max-time",
    "10",
    "-w",
    "\n%{http_code} %{http_version}",
    ...args,
  ]);
  const cut = stdout.lastIndexOf("\n");
  return { body: stdout.slice(0, cut), status: stdout.slice(cut + 1), stderr };
}

/** Resolves with how long the server took to close a connection that sends `bytes` (or nothing). */
function closedAfter(port: number, bytes?: Buffer): Promise<{ ms: number; received: number }> {
  return new Promise((resolve, reject) => {
    const opened = Date.now();
    let received = 0;
    const s = connectTcp({ host: "127.0.0.1", port }, () => {
      if (bytes) s.write(bytes);
    });
    s.on("data", (d: Buffer) => {
      received += d.length;
    });
    s.on("error", () => {});
    s.on("close", () => resolve({ ms: Date.now() - opened, received }));
    setTimeout(() => reject(new Error("not closed")), 10_000).unref();
  });
}

describe("the HTTP server with TLS_CERT_FILE and TLS_KEY_FILE: HTTPS, HTTP/2 and HTTP/1.1", () => {
  let dir: string;
  let cert: TestCertificate;
  let t: TestApp;
  let origin = "";
  let port = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-https-"));
    // api.wallet is served by our own DNS: curl --doh-url finds this server through it.
    cert = makeTestCertificate(dir, ["api.wallet"]);
    t = await createTestApp({
      config: { tlsCertFile: cert.certFile, tlsKeyFile: cert.keyFile, tlsHandshakeTimeoutMs: HANDSHAKE_MS },
    });
    const id = await t.store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(9_001), name: "api.wallet", sld: "api", tld: "wallet" }),
    );
    await t.store.domainMap.replaceRecords(id, [
      { key: "record.A.0", value: "127.0.0.1", nativeKey: "record.A.0", nativeValue: "127.0.0.1" },
    ]);
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    port = (t.app.server.address() as { port: number }).port;
    origin = `https://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("speaks HTTP/2 to a client that offers h2 and HTTP/1.1 to one that does not (ALPN)", async () => {
    const h2 = await curl("--cacert", cert.certFile, "--http2", `${origin}/healthz`);
    expect(h2.status).toBe("200 2");
    expect(JSON.parse(h2.body)).toEqual({ result: true, data: { status: "alive" } });
    const h1 = await curl("--cacert", cert.certFile, "--http1.1", `${origin}/healthz`);
    expect(h1.status).toBe("200 1.1");
    // The public URL follows the scheme: HSTS is sent (security-headers.plugin.ts).
    const headers = await curl("--cacert", cert.certFile, "-D", "-", "-o", "/dev/null", `${origin}/healthz`);
    expect(headers.body).toMatch(/strict-transport-security: max-age=/i);
  });

  it("the API over HTTP/2: a resolve with the key, 401 without", async () => {
    const ok = await curl(
      "--cacert",
      cert.certFile,
      "-H",
      `api-key: ${t.key}`,
      `${origin}/svc/api/v1/resolve?domain=alice.wallet`,
    );
    expect(ok.status).toBe("200 2");
    expect(JSON.parse(ok.body).result).toBe(true);
    expect(
      (await curl("--cacert", cert.certFile, `${origin}/svc/api/v1/resolve?domain=alice.wallet`)).status,
    ).toBe("401 2");
  });

  it.each(["+https", "+https-get"])(
    "DoH over HTTP/2: kdig %s gets the authoritative answer",
    async (mode) => {
      const { stdout } = await run("kdig", [
        "@127.0.0.1",
        "-p",
        String(port),
        mode,
        `+tls-ca=${cert.certFile}`,
        "alice.wallet",
        "A",
      ]);
      expect(stdout).toMatch(/status: NOERROR/);
      expect(stdout).toMatch(/HTTP session \(HTTP\/2-(POST|GET)\)-\(127.0.0.1\/dns-query\)-\(status: 200\)/);
      expect(stdout).toMatch(/Flags: qr aa rd;/);
      expect(stdout).toMatch(/alice\.wallet\.\s+300\s+IN\s+A\s+192\.0\.2\.1/);
    },
  );

  it("curl --doh-url: resolves api.wallet through /dns-query, then fetches from it over HTTP/2", async () => {
    const r = await curl(
      "-v",
      "--cacert",
      cert.certFile,
      "--doh-url",
      `${origin}/dns-query`,
      `https://api.wallet:${port}/healthz`,
    );
    expect(r.stderr).toMatch(/DoH A: 127\.0\.0\.1/);
    expect(r.status).toBe("200 2");
    expect(JSON.parse(r.body).data.status).toBe("alive");
  });

  it("a client that never finishes its TLS handshake is disconnected after TLS_HANDSHAKE_TIMEOUT_MS", async () => {
    const [silent, partial] = await Promise.all([
      closedAfter(port),
      closedAfter(port, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00])),
    ]);
    for (const c of [silent, partial]) {
      expect(c.ms).toBeGreaterThanOrEqual(HANDSHAKE_MS - 50);
      expect(c.ms).toBeLessThan(HANDSHAKE_MS + 3_000);
      expect(c.received).toBe(0);
    }
  });

  it("a renewed certificate written over the files is served without a restart (checked every 10 s)", async () => {
    expect(await servedFingerprint(port)).toBe(cert.fingerprint256);
    const renewed = makeTestCertificate(dir, ["api.wallet"], "renewed-");
    copyFileSync(renewed.certFile, cert.certFile);
    copyFileSync(renewed.keyFile, cert.keyFile);
    const end = Date.now() + 25_000;
    while ((await servedFingerprint(port)) !== renewed.fingerprint256) {
      if (Date.now() > end) throw new Error("the renewed certificate was not served within 25 s");
      await new Promise((r) => setTimeout(r, 250));
    }
    const after = await curl("--cacert", renewed.certFile, `${origin}/healthz`);
    expect(after.status).toBe("200 2");
  }, 40_000);

  it("plain HTTP to the HTTPS port: the connection is closed, no HTTP answer; HTTPS still works", async () => {
    const plain = await closedAfter(port, Buffer.from("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(plain.ms).toBeLessThan(3_000);
    const after = await curl("-k", `${origin}/healthz`);
    expect(after.status).toBe("200 2");
  });
});

/** The SHA-256 fingerprint of the certificate the server at 127.0.0.1:port presents. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connectTls(
      { host: "127.0.0.1", port, rejectUnauthorized: false, ALPNProtocols: ["h2"] },
      () => {
        const fp = s.getPeerX509Certificate()?.fingerprint256 ?? "";
        s.destroy();
        resolve(fp);
      },
    );
    s.once("error", reject);
  });
}

describe("the HTTP server without TLS settings", () => {
  it("is plain HTTP/1.1, as before", async () => {
    const t = await createTestApp();
    try {
      await t.app.listen({ host: "127.0.0.1", port: 0 });
      const port = (t.app.server.address() as { port: number }).port;
      const r = await curl(`http://127.0.0.1:${port}/healthz`);
      expect(r.status).toBe("200 1.1");
      expect(t.ctx.config.publicUrl.startsWith("http:")).toBe(true);
    } finally {
      await t.close();
    }
  });
});

import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as connectTcp, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as connectTls, type TLSSocket } from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestCertificate, type TestCertificate } from "../../test/helpers/tls-cert.js";
import { watchTlsCredentials } from "../config/tls-credentials.js";
import { AnswerCache } from "./answer-cache.js";
import { readFrames, tcpFrame } from "./dns-client.testing.js";
import { buildTestQuery, decodeTestAnswer } from "./dns.testing.js";
import { createDotServer, type DotServer } from "./dot-server.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";

const run = promisify(execFile);
const HANDSHAKE_MS = 400;
const IDLE_MS = 400;

const lookup = createStaticZoneLookup(
  { wallet: { "alice.wallet": { "record.A.0": "10.0.0.1", "record.TXT.0": "hello" } } },
  { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 7 },
);

function tlsClient(port: number, ca: Buffer): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connectTls(
      { host: "127.0.0.1", port, ca, servername: "localhost", ALPNProtocols: ["dot"] },
      () => resolve(s),
    );
    s.once("error", reject);
  });
}

function tcpClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connectTcp({ host: "127.0.0.1", port }, () => resolve(s));
    s.once("error", reject);
  });
}

describe("DNS-over-TLS (RFC 7858), judged by kdig +tls", () => {
  let dir: string;
  let cert: TestCertificate;
  let dot: DotServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-dot-"));
    cert = makeTestCertificate(dir);
    dot = await createDotServer({
      lookup,
      cache: new AnswerCache({ lookup, clock: () => 0 }),
      host: "127.0.0.1",
      port: 0,
      credentials: cert,
      handshakeTimeoutMs: HANDSHAKE_MS,
      tcpIdleMs: IDLE_MS,
      tcpMaxClients: 3,
    });
  });
  afterAll(async () => {
    await dot.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const kdig = async (...args: string[]) =>
    (await run("kdig", ["@127.0.0.1", "-p", String(dot.port), `+tls-ca=${cert.certFile}`, ...args])).stdout;

  it("kdig +tls, verifying the certificate: the authoritative answer", async () => {
    const out = await kdig("+tls", "alice.wallet", "A");
    expect(out).toMatch(/TLS session \(TLS1\.3\)/);
    expect(out).toMatch(/status: NOERROR/);
    expect(out).toMatch(/Flags: qr aa rd;/);
    expect(out).toMatch(/alice\.wallet\.\s+300\s+IN\s+A\s+10\.0\.0\.1/);
    expect(await kdig("+tls", "nobody.wallet", "A")).toMatch(/status: NXDOMAIN/);
    expect(await kdig("+tls", "acme.com", "A")).toMatch(/status: REFUSED/);
  });

  it("negotiates ALPN dot and answers pipelined queries on one connection", async () => {
    const s = await tlsClient(dot.port, cert.cert);
    expect(s.alpnProtocol).toBe("dot");
    const r = readFrames(s);
    s.write(
      Buffer.concat([
        tcpFrame(buildTestQuery("alice.wallet", "A", { id: 1 })),
        tcpFrame(buildTestQuery("alice.wallet", "TXT", { id: 2 })),
      ]),
    );
    const answers = [
      decodeTestAnswer((await r.next()) as Buffer),
      decodeTestAnswer((await r.next()) as Buffer),
    ];
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    s.destroy();
  });

  it("plain DNS over TCP to the TLS port: closed, nothing answered", async () => {
    const s = await tcpClient(dot.port);
    const r = readFrames(s);
    s.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 3 })));
    expect(await r.next()).toBe("closed");
  });

  it("a client that never finishes its handshake is closed after the handshake timeout", async () => {
    const silent = await tcpClient(dot.port);
    const opened = Date.now();
    const r1 = readFrames(silent);
    // A ClientHello's first bytes, then nothing.
    const partial = await tcpClient(dot.port);
    const r2 = readFrames(partial);
    partial.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]));
    expect(await r1.next()).toBe("closed");
    expect(await r2.next()).toBe("closed");
    const waited = (r1.closedAt() ?? 0) - opened;
    expect(waited).toBeGreaterThanOrEqual(HANDSHAKE_MS - 50);
    expect(waited).toBeLessThan(HANDSHAKE_MS + 2_000);
  });

  it("stalled handshakes count against the cap; the server answers again once they are gone", async () => {
    const stalled = await Promise.all([tcpClient(dot.port), tcpClient(dot.port), tcpClient(dot.port)]);
    const readers = stalled.map((s) => readFrames(s));
    await new Promise((r) => setTimeout(r, 50));
    await expect(tlsClient(dot.port, cert.cert)).rejects.toThrow();
    for (const r of readers) expect(await r.next()).toBe("closed");
    expect(await kdig("+tls", "alice.wallet", "A")).toMatch(/status: NOERROR/);
  });

  it("a truncated frame: closed at the idle timeout; a 65,535-byte frame of junk: FORMERR, then it goes on", async () => {
    const cut = await tlsClient(dot.port, cert.cert);
    const rc = readFrames(cut);
    cut.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 4 })).subarray(0, 12));
    expect(await rc.next()).toBe("closed");

    const big = await tlsClient(dot.port, cert.cert);
    const rb = readFrames(big);
    big.write(tcpFrame(Buffer.alloc(65_535, 0)));
    const junk = decodeTestAnswer((await rb.next()) as Buffer);
    expect(junk.rcode).toBe("FORMERR");
    big.write(tcpFrame(buildTestQuery("alice.wallet", "A", { id: 5 })));
    const ok = decodeTestAnswer((await rb.next()) as Buffer);
    expect([ok.id, ok.rcode]).toEqual([5, "NOERROR"]);
    big.destroy();
  });

  it("a renewed certificate is served to new connections; a broken pair is reported and the old one kept", async () => {
    const files = { tlsCertFile: join(dir, "live-cert.pem"), tlsKeyFile: join(dir, "live-key.pem") };
    copyFileSync(cert.certFile, files.tlsCertFile);
    copyFileSync(cert.keyFile, files.tlsKeyFile);
    const errors: unknown[] = [];
    let reloads = 0;
    const stop = watchTlsCredentials(
      files,
      (c) => {
        reloads++;
        dot.setCredentials(c);
      },
      (e) => errors.push(e),
      50,
    );
    try {
      const renewed = makeTestCertificate(dir, [], "renewed-");
      // The new certificate with the old key first (a renewal half written): refused, old one kept.
      copyFileSync(renewed.certFile, files.tlsCertFile);
      await until(() => errors.length > 0);
      const before = await tlsClient(dot.port, cert.cert);
      expect(before.getPeerX509Certificate()?.fingerprint256).toBe(cert.fingerprint256);
      before.destroy();
      copyFileSync(renewed.keyFile, files.tlsKeyFile);
      await until(() => reloads > 0);
      const after = await tlsClient(dot.port, renewed.cert);
      expect(after.getPeerX509Certificate()?.fingerprint256).toBe(renewed.fingerprint256);
      after.destroy();
      writeFileSync(files.tlsCertFile, "not a certificate");
      await until(() => errors.length > 1);
      const still = await tlsClient(dot.port, renewed.cert);
      expect(still.getPeerX509Certificate()?.fingerprint256).toBe(renewed.fingerprint256);
      still.destroy();
    } finally {
      stop();
      dot.setCredentials(cert);
    }
  });
});

async function until(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

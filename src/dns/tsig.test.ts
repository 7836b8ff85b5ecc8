import dnsPacket from "dns-packet";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/load-config.js";
import { parseNotifyTargets } from "./notify.js";
import {
  errorTsig,
  parseTsigKeys,
  readTsig,
  ResponseSigner,
  signRequest,
  TSIG_ERROR,
  verifyRequest,
  verifyResponse,
} from "./tsig.js";

const SECRET = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMw==";
const KEY = { name: "xfr", secret: Buffer.from(SECRET, "base64") };
const query = (id = 1) =>
  dnsPacket.encode({ type: "query", id, questions: [{ name: "wallet", type: "AXFR" as never }] });

describe("DNS_TSIG_KEYS", () => {
  const rows: Array<[string, string | RegExp]> = [
    [`xfr:hmac-sha256:${SECRET}`, "xfr"],
    [` a.example.:HMAC-SHA256:${SECRET} , b:hmac-sha256:${SECRET}`, "a.example,b"],
    ["", ""],
    [`xfr:hmac-md5:${SECRET}`, /only hmac-sha256/],
    ["xfr:hmac-sha256:not base64!", /not base64/],
    ["xfr:hmac-sha256:c2hvcnQ=", /under 16 bytes/],
    [`xfr:hmac-sha256:${SECRET}:extra`, /is not name:hmac-sha256:base64secret/],
    [`bad name:hmac-sha256:${SECRET}`, /is not name/],
    [`xfr:hmac-sha256:${SECRET},XFR:hmac-sha256:${SECRET}`, /given twice/],
  ];
  for (const [value, want] of rows)
    it(JSON.stringify(value.slice(0, 40)), () => {
      if (typeof want === "string")
        expect(
          parseTsigKeys(value)
            .map((k) => k.name)
            .join(","),
        ).toBe(want);
      else {
        expect(() => parseTsigKeys(value)).toThrow(want);
        // The error names the key, never the secret.
        try {
          parseTsigKeys(value);
        } catch (e) {
          expect((e as Error).message).not.toContain(SECRET);
        }
      }
    });

  it("is a secret of the config: a malformed value is not echoed", () => {
    expect(() => loadConfig({ DNS_TSIG_KEYS: `xfr:hmac-md5:${SECRET}` })).toThrow(
      /name:hmac-sha256:base64secret/,
    );
    try {
      loadConfig({ DNS_TSIG_KEYS: `xfr:hmac-md5:${SECRET}` });
    } catch (e) {
      expect((e as Error).message).not.toContain(SECRET);
    }
  });
});

describe("DNS_NOTIFY", () => {
  const rows: Array<[string, string | RegExp]> = [
    ["127.0.0.1:5300", "127.0.0.1|5300"],
    [" ns2.example.net:53 , [::1]:5301", "ns2.example.net|53,::1|5301"],
    ["", ""],
    ["127.0.0.1", /is not host:port/],
    ["127.0.0.1:0", /is not host:port/],
    ["127.0.0.1:70000", /is not host:port/],
    ["::1:53", /is not host:port/],
  ];
  for (const [value, want] of rows)
    it(JSON.stringify(value), () => {
      if (typeof want === "string")
        expect(
          parseNotifyTargets(value)
            .map((t) => `${t.host}|${t.port}`)
            .join(","),
        ).toBe(want);
      else expect(() => parseNotifyTargets(value)).toThrow(want);
    });

  it("is checked when the config loads", () => {
    expect(() => loadConfig({ DNS_NOTIFY: "nope" })).toThrow(/host:port/);
    expect(loadConfig({ DNS_NOTIFY: "127.0.0.1:53,[::1]:53" }).dnsNotify).toBe("127.0.0.1:53,[::1]:53");
  });
});

describe("TSIG signing and checking", () => {
  const now = Date.UTC(2026, 0, 1);

  it("a signed request checks out; any changed byte, another secret or another time does not", () => {
    const { packet } = signRequest(query(), KEY, now);
    const read = readTsig(packet);
    if (read.kind !== "tsig") throw new Error("no TSIG");
    expect(verifyRequest(packet, read.tsig, [KEY], now)).toMatchObject({ ok: true });
    const flipped = Buffer.from(packet);
    flipped[14] ^= 0x20;
    const r2 = readTsig(flipped);
    if (r2.kind !== "tsig") throw new Error("no TSIG");
    expect(verifyRequest(flipped, r2.tsig, [KEY], now)).toMatchObject({
      ok: false,
      error: TSIG_ERROR.BADSIG,
    });
    const other = { name: "xfr", secret: Buffer.alloc(32, 1) };
    expect(verifyRequest(packet, read.tsig, [other], now)).toMatchObject({
      ok: false,
      error: TSIG_ERROR.BADSIG,
    });
    expect(verifyRequest(packet, read.tsig, [{ ...KEY, name: "other" }], now)).toMatchObject({
      ok: false,
      error: TSIG_ERROR.BADKEY,
    });
    expect(verifyRequest(packet, read.tsig, [KEY], now + 301_000)).toMatchObject({
      ok: false,
      error: TSIG_ERROR.BADTIME,
    });
    expect(verifyRequest(packet, read.tsig, [KEY], now + 299_000)).toMatchObject({ ok: true });
  });

  it("a response signed with the request's MAC checks out against that request only", () => {
    const { packet, mac } = signRequest(query(9), KEY, now);
    const answer = dnsPacket.encode({
      type: "response",
      id: 9,
      questions: [{ name: "wallet", type: "SOA" }],
    });
    const signed = new ResponseSigner(KEY, mac, 9, () => now).sign(answer);
    expect(verifyResponse(signed, KEY, mac)).toBe(true);
    expect(verifyResponse(signed, KEY, Buffer.alloc(32))).toBe(false);
    expect(readTsig(packet).kind).toBe("tsig");
  });

  it("malformed TSIGs are told apart from absent ones", () => {
    expect(readTsig(query()).kind).toBe("none");
    const { packet } = signRequest(query(), KEY, now);
    // Cut inside the TSIG's RDATA: counts past the end.
    expect(readTsig(packet.subarray(0, packet.length - 3)).kind).toBe("malformed");
    // A TSIG of another class.
    const at = readTsig(packet);
    if (at.kind !== "tsig") throw new Error("no TSIG");
    const wrongClass = Buffer.from(packet);
    wrongClass.writeUInt16BE(1, at.tsig.start + 5 + 2);
    expect(readTsig(wrongClass).kind).toBe("malformed");
  });
});

describe("the TSIG of an unsigned error answer (BADKEY, BADSIG)", () => {
  const now = Date.UTC(2026, 0, 1);
  /** A request signed with KEY, its algorithm name then rewritten (same length or not). */
  function requestWithAlgorithm(algorithm: string): Buffer {
    const { packet } = signRequest(query(5), KEY, now);
    const at = readTsig(packet);
    if (at.kind !== "tsig") throw new Error("no TSIG");
    const ownerEnd = packet.indexOf(0, at.tsig.start) + 1;
    const algStart = ownerEnd + 10;
    const algEnd = packet.indexOf(0, algStart) + 1;
    const alg = Buffer.concat([
      ...algorithm.split(".").map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])),
      Buffer.from([0]),
    ]);
    const out = Buffer.concat([packet.subarray(0, algStart), alg, packet.subarray(algEnd)]);
    out.writeUInt16BE(out.readUInt16BE(ownerEnd + 8) + alg.length - (algEnd - algStart), ownerEnd + 8);
    return out;
  }
  // Each row: the request's algorithm, the error, and the algorithm the answer must name (RFC 8945
  // §5.2: the request's, so the client can match it; dig calls anything else a verify failure).
  const rows: Array<[string, number, string]> = [
    ["hmac-sha512", TSIG_ERROR.BADKEY, "hmac-sha512"],
    ["hmac-sha384", TSIG_ERROR.BADKEY, "hmac-sha384"],
    ["HMAC-SHA1", TSIG_ERROR.BADKEY, "hmac-sha1"],
    ["hmac-sha256", TSIG_ERROR.BADSIG, "hmac-sha256"],
  ];
  it.each(rows)("a %s request, error %i: the answer names %s", (algorithm, error, want) => {
    const request = requestWithAlgorithm(algorithm);
    const read = readTsig(request);
    if (read.kind !== "tsig") throw new Error("no TSIG");
    const check = { ok: false as const, error, tsig: read.tsig, key: null };
    const answer = errorTsig(query(5), check, now);
    const got = readTsig(answer);
    if (got.kind !== "tsig") throw new Error("no TSIG in the answer");
    expect(got.tsig).toMatchObject({ algorithm: want, error, key: "xfr", originalId: 5 });
    expect(got.tsig.mac.length).toBe(0);
  });
});

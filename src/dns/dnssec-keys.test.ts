import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dsText, generateDnssecKeyPem, keyTagOf, loadDnssecKeys, parseDnssecKeys } from "./dnssec-keys.js";

const dir = mkdtempSync(join(tmpdir(), "omniname-dnssec-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const pem = (type: "ec" | "rsa", curve?: string) => {
  const { privateKey } =
    type === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength: 1024 })
      : generateKeyPairSync("ec", { namedCurve: curve ?? "P-256" });
  return privateKey.export({ type: "pkcs8", format: "pem" }).toString();
};

describe("DNSSEC key files", () => {
  it.each<[string, string, RegExp]>([
    ["an empty file", "", /no PEM private key/],
    ["text that is no key", "hello\n", /no PEM private key/],
    ["a truncated PEM", generateDnssecKeyPem().slice(0, 120), /no PEM private key/],
    ["an RSA key", pem("rsa"), /key 1: .*P-256/],
    ["a P-384 key", pem("ec", "P-384"), /key 1: .*P-256/],
    ["a corrupt body", generateDnssecKeyPem().replace(/\n[A-Za-z0-9+/]{20}/, "\n!!!!"), /key 1:/],
    ["five keys", Array.from({ length: 5 }, generateDnssecKeyPem).join("\n"), /5 keys, at most 4/],
    [
      "one key twice",
      (() => {
        const k = generateDnssecKeyPem();
        return `${k}\n${k}`;
      })(),
      /the same key twice/,
    ],
  ])("%s: refused with a message naming the file", (_label, text, message) => {
    expect(() => parseDnssecKeys(text, "keys.pem")).toThrow(message);
    expect(() => parseDnssecKeys(text, "keys.pem")).toThrow(/^keys\.pem: /);
  });

  it("accepts an OpenSSL SEC1 key (EC PRIVATE KEY) beside PKCS#8 ones", () => {
    const sec1 = execFileSync("openssl", ["ecparam", "-name", "prime256v1", "-genkey", "-noout"], {
      encoding: "utf8",
    });
    const keys = parseDnssecKeys(`${generateDnssecKeyPem()}\n${sec1}`, "mixed");
    expect(keys.keys).toHaveLength(2);
    for (const k of keys.keys) expect(k.dnskey.length).toBe(4 + 64);
  });

  it("the key tag and DS agree with BIND's dnssec-dsfromkey", () => {
    const keys = parseDnssecKeys(generateDnssecKeyPem(), "t");
    const key = keys.keys[0];
    const keyFile = join(dir, "k.key");
    writeFileSync(keyFile, `wallet. 3600 IN DNSKEY 257 3 13 ${key.dnskey.subarray(4).toString("base64")}\n`);
    const bind = execFileSync("dnssec-dsfromkey", ["-2", "-f", keyFile, "wallet"], { encoding: "utf8" });
    const [, tag, digest] = /DS (\d+) 13 2 ([0-9A-F]+)/.exec(bind)!;
    expect(keyTagOf(key.dnskey)).toBe(Number(tag));
    expect(dsText("wallet", key, 3600)).toBe(`wallet.\t3600\tIN\tDS\t${tag} 13 2 ${digest}`);
  });

  it("DATA_DIR/dnssec.key: generated once, mode 0600, the same key on every later load", () => {
    const dataDir = join(dir, "data");
    const first = loadDnssecKeys({ dataDir, dnssecKeyFile: undefined });
    const file = join(dataDir, "dnssec.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = loadDnssecKeys({ dataDir, dnssecKeyFile: undefined });
    expect(again.keys[0].dnskey.equals(first.keys[0].dnskey)).toBe(true);
    expect(readFileSync(file, "utf8")).toMatch(
      /^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/,
    );
  });

  it("DNSSEC_KEY_FILE: read, never created", () => {
    expect(() => loadDnssecKeys({ dataDir: dir, dnssecKeyFile: join(dir, "absent.pem") })).toThrow(/ENOENT/);
  });
});

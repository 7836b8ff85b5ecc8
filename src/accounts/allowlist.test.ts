import { describe, expect, it } from "vitest";
import {
  compileIpRules,
  createClientIpResolver,
  ipMatches,
  normalizeOrigin,
  originMatches,
  parseIpRule,
  parseOriginRule,
} from "./allowlist.js";

describe("parseIpRule", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7"],
    [" 10.0.0.0/8 ", "10.0.0.0/8"],
    ["2001:DB8::/32", "2001:db8::/32"],
    ["::ffff:192.0.2.1", "192.0.2.1"],
    ["0.0.0.0/0", "0.0.0.0/0"],
  ])("accepts %s as %s", (input, out) => {
    expect(parseIpRule(input)).toBe(out);
  });

  it.each([
    "",
    "300.1.1.1",
    "10.0.0.0/33",
    "2001:db8::/129",
    "10.0.0.0/-1",
    "10.0.0.0/8/8",
    "example.com",
    "10.0.0.0/ 8",
    "1.2.3",
  ])("refuses %j", (input) => {
    expect(() => parseIpRule(input)).toThrow(/IP address|prefix/);
  });
});

describe("ipMatches", () => {
  const list = compileIpRules(["203.0.113.0/24", "192.0.2.10", "2001:db8::/32"])!;
  it.each([
    ["203.0.113.1", true],
    ["203.0.113.255", true],
    ["203.0.114.0", false],
    ["192.0.2.10", true],
    ["192.0.2.11", false],
    ["2001:db8::1", true],
    ["2001:db9::1", false],
    ["garbage", false],
  ])("%s → %s", (ip, ok) => {
    expect(ipMatches(list, ip)).toBe(ok);
  });
  it("refuses a null address (unknown client)", () => {
    expect(ipMatches(list, null)).toBe(false);
  });
  it("compiles an empty list to no restriction", () => {
    expect(compileIpRules([])).toBeNull();
  });
});

describe("origins", () => {
  it.each([
    ["https://App.Example.com", "https://app.example.com"],
    ["https://app.example.com:443", "https://app.example.com"],
    ["http://localhost:3000", "http://localhost:3000"],
    ["https://*.example.com", "https://*.example.com"],
  ])("canonicalizes %s", (input, out) => {
    expect(parseOriginRule(input)).toBe(out);
  });

  it.each([
    "app.example.com",
    "https://app.example.com/",
    "https://app.example.com/x",
    "ftp://x.y",
    "https://a@b.c",
    "https://*",
    "null",
  ])("refuses the rule %j", (input) => {
    expect(() => parseOriginRule(input)).toThrow();
  });

  const rules = ["https://app.example.com", "https://*.partner.test"];
  it.each([
    ["https://app.example.com", true],
    ["https://APP.EXAMPLE.COM", true],
    ["http://app.example.com", false],
    ["https://a.partner.test", true],
    ["https://a.b.partner.test", true],
    ["https://partner.test", false],
    ["https://evilpartner.test", false],
    ["https://a.partner.test:8443", false],
    ["https://*.partner.test", false],
    ["null", false],
  ])("%s allowed: %s", (origin, ok) => {
    expect(originMatches(rules, origin)).toBe(ok);
  });

  it("does not take a wildcard from a request", () => {
    expect(normalizeOrigin("https://*.partner.test")).toBeNull();
  });
});

describe("createClientIpResolver", () => {
  it("uses the socket when no proxy is trusted, whatever the headers", () => {
    const ip = createClientIpResolver("");
    expect(ip("198.51.100.1", "203.0.113.7")).toBe("198.51.100.1");
    expect(ip("::ffff:198.51.100.1", undefined)).toBe("198.51.100.1");
    expect(ip(undefined, "203.0.113.7")).toBeNull();
  });

  it.each([
    ["127.0.0.1", "203.0.113.7", "203.0.113.7"],
    ["127.0.0.1", "203.0.113.7, 10.0.0.5", "203.0.113.7"],
    ["127.0.0.1", "1.1.1.1, 203.0.113.7", "203.0.113.7"],
    ["127.0.0.1", "203.0.113.7, 198.51.100.9", "198.51.100.9"],
    ["198.51.100.1", "203.0.113.7", "198.51.100.1"],
    ["127.0.0.1", "", "127.0.0.1"],
    ["127.0.0.1", "bogus", null],
    ["127.0.0.1", "10.0.0.1, 10.0.0.2", "10.0.0.1"],
  ])("behind 127.0.0.1 and 10/8: peer %s, X-Forwarded-For %j → %s", (peer, xff, out) => {
    expect(createClientIpResolver("127.0.0.1, 10.0.0.0/8")(peer, xff)).toBe(out);
  });
});

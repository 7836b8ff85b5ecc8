import { describe, expect, it } from "vitest";
import {
  MAX_QUERY_LENGTH,
  MAX_QUERY_PARAMS,
  parseQueryString,
  QUERY_DUPLICATES,
  QUERY_ERROR,
  QUERY_MALFORMED,
} from "./query-string.js";

describe("parseQueryString", () => {
  it.each([
    ["", {}],
    ["domain=alice.wallet", { domain: "alice.wallet" }],
    ["domain=caf%C3%A9.eth&network=eth", { domain: "café.eth", network: "eth" }],
    ["domain=a+b", { domain: "a b" }],
    ["domain=%C3%28.eth", { domain: "\ufffd(.eth" }],
    ["domain=%FF", { domain: "\ufffd" }],
    ["domain=50%25", { domain: "50%" }],
    ["domain=100%", { domain: "100%" }, ["domain"]],
    ["domain=%zz%C3%A9", { domain: "%zzé" }, ["domain"]],
    ["a%ZZ=1&domain=%C3%28&b=%&b=%", { "a%ZZ": "1", domain: "\ufffd(", b: "%" }, ["a%ZZ", "b"]],
    ["explain", { explain: "" }],
    ["&&domain=x&&", { domain: "x" }],
    ["=x&domain=y", { domain: "y" }],
    ["a=1=2", { a: "1=2" }],
    ["domain=café.eth", { domain: "café.eth" }],
  ])("%j", (raw: string, expected: Record<string, string>, malformed?: string[]) => {
    const q = parseQueryString(raw);
    expect(Object.fromEntries(Object.entries(q))).toEqual(expected);
    expect(q[QUERY_ERROR]).toBeUndefined();
    // A "%" without two hex digits is not URL encoding: the names are listed, the value kept.
    expect(q[QUERY_MALFORMED]).toEqual(malformed);
  });

  it("keeps the first of repeated parameters and lists the repeated names", () => {
    const q = parseQueryString("domain=a&network=x&domain=b&domain=c");
    expect(q.domain).toBe("a");
    expect(q[QUERY_DUPLICATES]).toEqual(["domain"]);
  });

  it("refuses an overlong query string and too many parameters without throwing", () => {
    expect(parseQueryString(`d=${"a".repeat(MAX_QUERY_LENGTH)}`)[QUERY_ERROR]?.code).toBe(
      "PARAMETER_TOO_LONG",
    );
    const many = Array.from({ length: MAX_QUERY_PARAMS + 1 }, (_, i) => `p${i}=1`).join("&");
    expect(parseQueryString(many)[QUERY_ERROR]?.code).toBe("PARAMETER_TOO_LONG");
  });

  it("returns an object that inherits nothing", () => {
    const q = parseQueryString("__proto__=x&constructor=y");
    const proto = Object.getPrototypeOf(q);
    expect(Object.getPrototypeOf(proto)).toBeNull();
    expect(Reflect.ownKeys(proto)).toEqual([]);
    expect(Object.isFrozen(proto)).toBe(true);
    expect("toString" in parseQueryString("a=1")).toBe(false);
    expect(Object.entries(q)).toEqual([
      ["__proto__", "x"],
      ["constructor", "y"],
    ]);
  });
});

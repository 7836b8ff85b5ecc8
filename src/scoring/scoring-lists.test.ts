import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { countryFromHeader, parseGeoBlockedWords } from "./geography.js";
import {
  icannTldsPath,
  loadIcannTlds,
  parseIanaTlds,
  refreshIanaTlds,
  shippedTldsPath,
} from "./iana-tlds.js";
import { parseKycFile } from "./kyc-list.js";
import { parseBlocklist, parseTermList } from "./scoring-lists.js";

const dir = mkdtempSync(join(tmpdir(), "omniname-lists-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("term lists and the blocklist", () => {
  it("reads one term a line, comments and blanks ignored, NFKC lower case", () => {
    expect(parseTermList("# header\nZZForbiddenZZ\n\n  ｑｑbannedqq  # full-width\nzzforbiddenzz\n")).toEqual(
      ["zzforbiddenzz", "qqbannedqq"],
    );
  });

  it("reads names and *.tld entries", () => {
    const b = parseBlocklist("Scam.Wallet\n*.badtld\nxn--caf-dma.wallet # punycode\n");
    expect([...b.names]).toEqual(["scam.wallet", "café.wallet"]);
    expect([...b.tlds]).toEqual(["badtld"]);
  });

  it.each(["nodot", "*.a.b", "bad name.x"])("refuses %s with its line number", (line) => {
    expect(() => parseBlocklist(`ok.x\n${line}\n`)).toThrow(/line 2/);
  });
});

describe("geography", () => {
  it("parses per-country words", () => {
    const g = parseGeoBlockedWords('{ "de": ["Casino", "wette"], "FR": [] }');
    expect(g.get("DE")?.words.map((w) => w.word)).toEqual(["casino", "wette"]);
    expect(g.get("FR")?.words).toEqual([]);
    expect(g.get("FR")?.joined).toBeNull();
  });

  it.each([
    { text: "[]", error: /expected an object/ },
    { text: '{ "Germany": ["x"] }', error: /not an ISO 3166/ },
    { text: '{ "DE": "casino" }', error: /array of strings/ },
    { text: "{", error: /not JSON/ },
  ])("refuses $text", ({ text, error }) => {
    expect(() => parseGeoBlockedWords(text)).toThrow(error);
  });

  it.each([
    { value: "DE", want: "DE" },
    { value: " fr ", want: "FR" },
    { value: ["US", "DE"], want: "US" },
    { value: "XX", want: null }, // Cloudflare: unknown
    { value: "Germany", want: null },
    { value: undefined, want: null },
  ])("reads the country header $value", ({ value, want }) => {
    expect(countryFromHeader(value)).toBe(want);
  });
});

describe("IANA TLD list", () => {
  it("ships a list with the ICANN root's TLDs and none of the Web3 ones", () => {
    const tlds = loadIcannTlds({});
    expect(tlds.size).toBeGreaterThan(1000);
    for (const t of ["com", "org", "рф", "app"]) expect(tlds.has(t)).toBe(true);
    for (const t of ["wallet", "crypto", "x", "eth", "nft", "web3"]) expect(tlds.has(t)).toBe(false);
  });

  it("parses IANA's format, decoding IDNs", () => {
    expect([...parseIanaTlds("# Version 1\nCOM\nXN--P1AI\n")]).toEqual(["com", "рф"]);
    expect(() => parseIanaTlds("COM\nnot a tld\n")).toThrow(/line 2/);
  });

  it("refreshes from a file, reports the changes, and the refreshed list takes precedence", () => {
    const shipped = readFileSync(shippedTldsPath(), "utf8");
    const source = join(dir, "tlds-alpha-by-domain.txt");
    writeFileSync(source, `# Version 2099010100\n${shipped.replace(/^APP\n/m, "")}WALLET\n`);
    const before = loadIcannTlds({ dataDir: dir });
    const dest = join(dir, "iana-tlds.txt");
    const r = refreshIanaTlds(source, dest, before);
    expect(r.added).toEqual(["wallet"]);
    expect(r.removed).toEqual(["app"]);
    expect(icannTldsPath({ dataDir: dir })).toBe(dest);
    expect(loadIcannTlds({ dataDir: dir }).has("wallet")).toBe(true);
  });

  it("refuses a file that is not the root zone list", () => {
    const source = join(dir, "short.txt");
    writeFileSync(source, "COM\nORG\n");
    expect(() => refreshIanaTlds(source, join(dir, "never.txt"), new Set())).toThrow(/does not look like/);
  });
});

describe("KYC file", () => {
  it("reads one address a line or CSV with a header", () => {
    const a = "0x00000000000000000000000000000000000000AA";
    expect(
      parseKycFile(
        `address,name\n${a},Alice\n# comment\n\n0x00000000000000000000000000000000000000bb\n${a}\n`,
      ),
    ).toEqual(["0x00000000000000000000000000000000000000aa", "0x00000000000000000000000000000000000000bb"]);
  });

  it("refuses invalid addresses with their line numbers", () => {
    expect(() => parseKycFile("0x00000000000000000000000000000000000000aa\n0x1234\nnope\n")).toThrow(
      /lines 2, 3/,
    );
  });
});

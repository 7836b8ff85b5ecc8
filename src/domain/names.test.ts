import punycode from "punycode/punycode.js";
import { describe, expect, it } from "vitest";
import {
  MAX_LABELS,
  MAX_NAME_BYTES,
  type NameResult,
  normalizeEnsName,
  normalizeName,
  splitName,
} from "./names.js";

/** A normalized name, or the pattern of the reason it is refused. */
type Outcome = string | RegExp;

const INVISIBLE = /control, invisible or white-space/;
const PUNCT = /not allowed in a label/;
const ENSIP15 = /not ENSIP-15 normalized/;
const PUNY = /invalid punycode/;

// [case, input, normalizeName, normalizeEnsName]
const TABLE: Array<[string, string, Outcome, Outcome]> = [
  // trimming, case, root dot
  ["plain ASCII", "alice.wallet", "alice.wallet", "alice.wallet"],
  ["trims white space around the name", "  alice.wallet \t\n", "alice.wallet", "alice.wallet"],
  ["trims Unicode white space around the name", "\u3000alice.wallet\u00a0", "alice.wallet", "alice.wallet"],
  ["folds case", "ALICE.Wallet", "alice.wallet", "alice.wallet"],
  ["drops a fully qualified name's root dot", "Alice.Wallet.", "alice.wallet", "alice.wallet"],
  ["keeps subdomains", "Pay.Alice.ETH", "pay.alice.eth", "pay.alice.eth"],
  ["keeps digits and hyphens", "web-3.x", "web-3.x", "web-3.x"],
  // Unicode normalization forms
  ["keeps NFC input", "caf\u00e9.wallet", "café.wallet", "café.wallet"],
  ["composes NFD input", "cafe\u0301.wallet", "café.wallet", "café.wallet"],
  ["composes and folds upper-case NFD input", "CAFE\u0301.WALLET", "café.wallet", "café.wallet"],
  ["keeps ß (IDNA 2008)", "straße.wallet", "straße.wallet", "straße.wallet"],
  // punycode
  ["decodes a punycode label", "xn--caf-dma.wallet", "café.wallet", "café.wallet"],
  ["decodes upper-case punycode", "XN--CAF-DMA.WALLET", "café.wallet", "café.wallet"],
  [
    "decodes a punycode TLD; ENSIP-15 refuses it as confusable",
    "alice.xn--p1ai",
    "alice.рф",
    /whole-script confusable/,
  ],
  ["decodes punycode of ß", "xn--strae-oqa.wallet", "straße.wallet", "straße.wallet"],
  ["decodes punycode of an emoji", "xn--158h.x", "🚀.x", "🚀.x"],
  ["refuses punycode with a non-base-36 digit", "xn--caf-dm!.wallet", PUNY, PUNY],
  ["refuses punycode that overflows", "xn--99999999999999.x", PUNY, PUNY],
  ["refuses an empty punycode label", "xn--.x", PUNY, PUNY],
  ["refuses punycode that decodes to plain ASCII", "xn--alice-.wallet", PUNY, PUNY],
  ["refuses punycode that is not the canonical encoding", "xn--caf-dma-.wallet", PUNY, PUNY],
  [
    "refuses punycode of a non-normalized label",
    `xn--${punycode.encode("cafÉ")}.wallet`,
    /does not encode a normalized label/,
    /does not encode a normalized label/,
  ],
  ["refuses punycode that decodes to C1 controls", "xn--abc.x", INVISIBLE, INVISIBLE],
  // scripts and emoji
  ["keeps emoji", "🚀.x", "🚀.x", "🚀.x"],
  ["keeps a ZWJ emoji sequence", "👩🏽‍💻.x", "👩🏽‍💻.x", "👩🏽‍💻.x"],
  ["keeps VS16 in emoji; ENSIP-15 drops it", "🏳️‍🌈.eth", "🏳️‍🌈.eth", "🏳‍🌈.eth"],
  ["keeps a keycap; ENSIP-15 drops VS16", "1️⃣.x", "1️⃣.x", "1⃣.x"],
  ["keeps the tags of a subdivision flag", "🏴󠁧󠁢󠁳󠁣󠁴󠁿.x", "🏴󠁧󠁢󠁳󠁣󠁴󠁿.x", "🏴󠁧󠁢󠁳󠁣󠁴󠁿.x"],
  ["folds Cyrillic", "Привет.wallet", "привет.wallet", "привет.wallet"],
  ["keeps CJK", "域名.wallet", "域名.wallet", "域名.wallet"],
  [
    "keeps a Cyrillic-Latin lookalike; ENSIP-15 refuses the mixture",
    "\u0430lice.wallet",
    "\u0430lice.wallet",
    /illegal mixture/,
  ],
  ["keeps full-width letters; ENSIP-15 maps them", "ｆｕｌｌ.eth", "ｆｕｌｌ.eth", "full.eth"],
  ["keeps a roman numeral; ENSIP-15 maps it", "Ⅻ.eth", "ⅻ.eth", "xii.eth"],
  // where the two rules differ on ASCII
  [
    "allows underscores; ENSIP-15 only at the start",
    "a_b.eth",
    "a_b.eth",
    /underscore allowed only at start/,
  ],
  ["allows a leading underscore", "_dmarc.eth", "_dmarc.eth", "_dmarc.eth"],
  ["allows -- at 3–4; ENSIP-15 refuses it", "ab--cd.eth", "ab--cd.eth", /invalid label extension/],
  ["refuses $; ENSIP-15 allows it", "$dollar.eth", PUNCT, "$dollar.eth"],
  // empty names and labels
  ["refuses an empty name", "", /empty/, /empty/],
  ["refuses white space only", " \t ", /empty/, /empty/],
  ["refuses the root alone", ".", /empty/, /empty/],
  ["refuses a single label", "alice", /second-level/, /second-level/],
  ["refuses an empty label", "alice..wallet", /empty label/, /empty label/],
  ["refuses a leading dot", ".wallet", /empty label/, /empty label/],
  ["refuses two trailing dots", "alice.wallet..", /empty label/, /empty label/],
  // controls, invisibles, bidi, white space inside the name
  ["refuses NUL", "ali\u0000ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a tab", "ali\tce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a newline", "ali\nce.wallet", INVISIBLE, INVISIBLE],
  ["refuses DEL", "ali\u007fce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a C1 control", "ali\u0085ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a space", "ali ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a no-break space", "ali\u00a0ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses an en space", "ali\u2002ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a hair space", "ali\u200ace.wallet", INVISIBLE, INVISIBLE],
  ["refuses an ideographic space", "ali\u3000ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a line separator", "ali\u2028ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a zero-width space", "ali\u200bce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a zero-width non-joiner", "ali\u200cce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a zero-width joiner between letters", "ali\u200dce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a ZWJ after an emoji and before a letter", "🚀\u200da.x", INVISIBLE, INVISIBLE],
  ["refuses a byte order mark", "ali\ufeffce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a soft hyphen (ENSIP-15 alone would drop it)", "ali\u00adce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a word joiner", "ali\u2060ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a combining grapheme joiner", "ali\u034fce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a Hangul filler", "ali\u3164ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses VS16 after a letter (ENSIP-15 alone would drop it)", "ali\ufe0fce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a tag character outside a flag", "alice\u{e0061}.wallet", INVISIBLE, INVISIBLE],
  ["refuses a right-to-left override", "ali\u202ece.wallet", INVISIBLE, INVISIBLE],
  ["refuses a left-to-right mark", "ali\u200ece.wallet", INVISIBLE, INVISIBLE],
  ["refuses a right-to-left isolate", "ali\u2067ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses an Arabic letter mark", "ali\u061cce.wallet", INVISIBLE, INVISIBLE],
  ["refuses a lone surrogate", "ali\ud800ce.wallet", INVISIBLE, INVISIBLE],
  ["refuses the replacement character", "ali\ufffdce.wallet", /invalid UTF-8/, /invalid UTF-8/],
  ["refuses an ideographic full stop", "alice\u3002wallet.x", /imitates a dot/, ENSIP15],
  ["refuses a full-width full stop", "alice\uff0ewallet.x", /imitates a dot/, ENSIP15],
  // ASCII punctuation: SQL, path and markup fragments
  ["refuses a quote and SQL comment; ENSIP-15 maps the quote", "a'--.x", PUNCT, "a’--.x"],
  ["refuses a semicolon", "a;--.x", PUNCT, ENSIP15],
  ["refuses a double quote", 'a".x', PUNCT, ENSIP15],
  ["refuses path traversal", "../etc.x", /empty label/, /empty label/],
  ["refuses a slash", "etc/passwd.x", PUNCT, ENSIP15],
  ["refuses a backslash", "a\\b.x", PUNCT, ENSIP15],
  ["refuses a percent escape", "a%2e.x", PUNCT, ENSIP15],
  ["refuses an at sign", "user@host.x", PUNCT, ENSIP15],
  ["refuses a colon", "a:b.x", PUNCT, ENSIP15],
  ["refuses markup", "<script>.x", PUNCT, ENSIP15],
  ["refuses a wildcard", "*.x", PUNCT, ENSIP15],
];

function check(result: NameResult, outcome: Outcome): void {
  if (typeof outcome === "string") {
    expect(result.ok ? result.value.name : result.reason).toBe(outcome);
  } else {
    expect(result.ok ? `accepted as ${result.value.name}` : result.reason).toMatch(outcome);
  }
}

describe("normalizeName", () => {
  it.each(TABLE.map(([c, input, generic]) => [c, input, generic] as const))("%s", (_, input, outcome) => {
    check(normalizeName(input), outcome);
  });

  it("is idempotent on every name it accepts", () => {
    for (const [, input] of TABLE) {
      const first = normalizeName(input);
      if (!first.ok) continue;
      const again = normalizeName(first.value.name);
      expect(again.ok && again.value.name, input).toBe(first.value.name);
      const viaAscii = normalizeName(first.value.ascii);
      expect(viaAscii.ok && viaAscii.value.name, first.value.ascii).toBe(first.value.name);
    }
  });

  it("splits the name into labels, sld, tld and the ASCII form", () => {
    const r = normalizeName("Pay.Café.Wallet");
    expect(r).toEqual({
      ok: true,
      value: {
        name: "pay.café.wallet",
        sld: "pay.café",
        tld: "wallet",
        labels: ["pay", "café", "wallet"],
        ascii: "pay.xn--caf-dma.wallet",
      },
    });
    const emoji = normalizeName("🚀.x");
    expect(emoji.ok && emoji.value.ascii).toBe("xn--158h.x");
  });
});

describe("normalizeEnsName", () => {
  it.each(TABLE.map(([c, input, , ens]) => [c, input, ens] as const))("%s", (_, input, outcome) => {
    check(normalizeEnsName(input), outcome);
  });

  it("is idempotent on every name it accepts", () => {
    for (const [, input] of TABLE) {
      const first = normalizeEnsName(input);
      if (!first.ok) continue;
      const again = normalizeEnsName(first.value.name);
      expect(again.ok && again.value.name, input).toBe(first.value.name);
    }
  });

  it("names the offending character without display marks", () => {
    const r = normalizeEnsName("a_b.eth");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).not.toMatch(/[\u200e\u200f]/);
  });
});

describe("name limits", () => {
  const label63 = "a".repeat(63);
  const exactly1024 = `${`${label63}.`.repeat(15)}${"b".repeat(64)}`;

  it.each([
    ["a name of exactly 1,024 bytes", exactly1024, true],
    ["a name of 1,025 bytes", `${exactly1024}b`, false],
    ["1,024 bytes padded with white space", `  ${exactly1024}\n`, true],
    [
      "a name over 1,024 bytes in fewer characters (UTF-8)",
      `${"é".repeat(200)}.${"é".repeat(200)}.${"é".repeat(120)}.x`,
      false,
    ],
    ["100 KB of input", "a.".repeat(50_000) + "x", false],
    ["255 labels", `${"a.".repeat(MAX_LABELS - 1)}x`, true],
    ["256 labels", `${"a.".repeat(MAX_LABELS)}x`, false],
    ["a label of 255 bytes", `${"a".repeat(255)}.x`, true],
    ["a label of 256 bytes", `${"a".repeat(256)}.x`, false],
  ])("%s", (_, input, accepted) => {
    const g = normalizeName(input);
    const e = normalizeEnsName(input);
    expect(g.ok).toBe(accepted);
    expect(e.ok).toBe(accepted);
    if (!g.ok) expect(g.reason).toMatch(/bytes|labels/);
  });

  it("measures the limit in UTF-8 bytes, not characters", () => {
    const name = `${"é".repeat(200)}.${"é".repeat(200)}.${"é".repeat(120)}.x`;
    expect(name.length).toBeLessThan(MAX_NAME_BYTES);
    expect(Buffer.byteLength(name)).toBeGreaterThan(MAX_NAME_BYTES);
    expect(normalizeName(name)).toEqual({ ok: false, reason: `longer than ${MAX_NAME_BYTES} bytes` });
    expect(normalizeName(`${"a.".repeat(MAX_LABELS)}x`)).toEqual({
      ok: false,
      reason: `more than ${MAX_LABELS} labels`,
    });
  });
});

describe("splitName", () => {
  it.each([
    ["alice.wallet", "alice", "wallet"],
    ["pay.alice.eth", "pay.alice", "eth"],
    ["eth", "", "eth"],
  ])("%s", (name, sld, tld) => {
    expect(splitName(name)).toEqual({ sld, tld });
  });
});

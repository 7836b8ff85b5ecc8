import { describe, expect, it } from "vitest";
import { safeText } from "./kysely/rows.js";
import { copyField as decodeField } from "./postgres/pg-name-scan.js";
import { copyField } from "./snapshot-encode.js";

describe("copyField (COPY text of a snapshot's field)", () => {
  it.each([
    ["plain", "plain"],
    ["a\\b", "a\\\\b"],
    ["tab\there", "tab\\there"],
    ["line\nbreak\r", "line\\nbreak\\r"],
    ["nul\u0000", "nul\ufffd"],
    ["nul\u0000\tand tab", "nul\ufffd\\tand tab"],
    ["\\N", "\\\\N"],
    ["é漢字🙂", "é漢字🙂"],
  ])("%j -> %j", (value, want) => {
    expect(copyField(value)).toBe(want);
  });

  it("writes null as \\N and numbers as their digits", () => {
    expect(copyField(null)).toBe("\\N");
    expect(copyField(1700000000000)).toBe("1700000000000");
  });

  it("reads back as stored (NUL as U+FFFD) for strings of every special character", () => {
    const alphabet = ["a", "\\", "\n", "\r", "\t", "\u0000", "\ufffd", "N", "é", "🙂"];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let i = 0; i < 2000; i++) {
      let s = "";
      for (let n = next() % 9; n > 0; n--) s += alphabet[next() % alphabet.length];
      expect(decodeField(copyField(s))).toBe(safeText(s));
    }
  });
});

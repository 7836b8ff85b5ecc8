import { describe, expect, it } from "vitest";
import { isMixedScript, scriptsOf } from "./scripts.js";
import { isConfusable, skeleton } from "./skeleton.js";

describe("TR39 skeleton", () => {
  it.each([
    { a: "alice.wallet", b: "\u0430lice.wallet", confusable: true }, // Cyrillic а
    { a: "paypal.x", b: "p\u0430yp\u0430l.x", confusable: true },
    { a: "mike.x", b: "rnike.x", confusable: true }, // m and rn
    { a: "google.x", b: "goog1e.x", confusable: true }, // digit one and l
    { a: "alice.wallet", b: "alice.wallet", confusable: false }, // the same name is not a lookalike
    { a: "alice.wallet", b: "alice.web3", confusable: false },
    { a: "bob.x", b: "b0b.x", confusable: false }, // 0 maps to O, not o (TR39 is case-sensitive)
  ])("$a vs $b → $confusable", ({ a, b, confusable }) => {
    expect(isConfusable(a, b)).toBe(confusable);
  });

  it("is idempotent", () => {
    const s = skeleton("p\u0430ypal");
    expect(skeleton(s)).toBe(s);
  });
});

describe("mixed scripts", () => {
  it.each([
    { label: "alice", mixed: false, scripts: ["Latin"] },
    { label: "p\u0430ypal", mixed: true, scripts: ["Latin", "Cyrillic"] },
    { label: "привет", mixed: false, scripts: ["Cyrillic"] },
    { label: "東京タワー", mixed: false, scripts: ["Han", "Katakana"] },
    { label: "한국中文", mixed: false, scripts: ["Hangul", "Han"] },
    { label: "カタカナ한국", mixed: true, scripts: ["Katakana", "Hangul"] },
    { label: "abc123-🚀", mixed: false, scripts: ["Latin"] },
    { label: "αβγ-abc", mixed: true, scripts: ["Greek", "Latin"] },
  ])("$label", ({ label, mixed, scripts }) => {
    expect(isMixedScript(label)).toBe(mixed);
    expect(scriptsOf(label)).toEqual(scripts);
  });
});

import { describe, expect, it } from "vitest";
import { hasLabelExtension, isPlainAsciiName } from "./plain-name.js";
import { ensip15Failure, ensip15FailureOfNormalizer } from "./rules/ens-normalization.rule.js";
import { findInvisible, findInvisibleByScan } from "./rules/invisible-chars.rule.js";

// Every string of up to 5 characters over an alphabet that reaches each branch of the fast path
// (letters, digits, hyphen, dot, and characters that must leave it: upper case, underscore,
// Unicode), plus random longer names and the shapes the crawler sees.
const ALPHABET = ["a", "x", "0", "-", ".", "A", "_", "é"];

function* exhaustive(max: number): Generator<string> {
  let layer = [""];
  yield "";
  for (let len = 1; len <= max; len++) {
    const next: string[] = [];
    for (const p of layer) for (const c of ALPHABET) next.push(p + c);
    yield* next;
    layer = next;
  }
}

function* random(count: number, seed: number): Generator<string> {
  let s = seed;
  const rnd = () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const chars = "abcdefghijklmnopqrstuvwxyz0123456789-.-.-_AZаοі\u200d\u00ad🙂ß";
  for (let i = 0; i < count; i++) {
    const len = 1 + Math.floor(rnd() * 24);
    let name = "";
    for (let j = 0; j < len; j++) name += [...chars][Math.floor(rnd() * [...chars].length)];
    yield name;
  }
}

const SHAPES = [
  "alice.crypto",
  "bench-bench-u123.bench",
  "xn--abc.eth",
  "ab--c.eth",
  "a--b.eth",
  "abc--.eth",
  "-abc.eth",
  "abc-.eth",
  "a..b",
  ".eth",
  "eth.",
  "123.x",
  "[0000000000000000000000000000000000000000000000000000000000000000].eth",
];

const names = () => [...SHAPES, ...exhaustive(5), ...random(20_000, 7)];

describe("the plain-ASCII fast path of the Unicode rules", () => {
  it.each([
    ["alice.crypto", true],
    ["a-1.b", true],
    ["Alice.crypto", false],
    ["a_b.x", false],
    ["a..b", false],
    ["", false],
    ["a.", false],
    ["ālice.x", false],
  ])("isPlainAsciiName(%j) is %s", (name, plain) => {
    expect(isPlainAsciiName(name)).toBe(plain);
  });

  it.each([
    ["xn--a.eth", true],
    ["a.xn--b", true],
    ["ab--", true],
    ["ab-", false],
    ["a--b.eth", false],
    ["abc--.eth", false],
  ])("hasLabelExtension(%j) is %s", (name, ext) => {
    expect(hasLabelExtension(name)).toBe(ext);
  });

  it("gives ENSIP-15's own verdict for every name", () => {
    let plain = 0;
    const wrong: string[] = [];
    for (const name of names()) {
      if (isPlainAsciiName(name)) plain++;
      if (ensip15Failure(name) !== ensip15FailureOfNormalizer(name)) wrong.push(name);
    }
    expect(wrong).toEqual([]);
    // The fast path was exercised, not only the full one.
    expect(plain).toBeGreaterThan(5_000);
  });

  it("finds the invisible characters the full scan finds, in every name", () => {
    const wrong = names().filter((name) => findInvisible(name) !== findInvisibleByScan(name));
    expect(wrong).toEqual([]);
  });
});

import { readFileSync } from "node:fs";
import { AppError } from "../domain/errors.js";
import { skeleton } from "./skeleton.js";

/** A blocked word in the forms it is matched in: as written, without separators, as a TR39 skeleton. */
interface GeoWord {
  word: string;
  joined: string;
  skel: string;
}

/** One country's words, compiled: one alternation per form, so a check is two regex scans. */
export interface GeoCountryWords {
  words: readonly GeoWord[];
  joined: RegExp | null;
  skel: RegExp | null;
  byJoined: ReadonlyMap<string, string>;
  bySkel: ReadonlyMap<string, string>;
}

/** Country (ISO 3166 alpha-2, upper case) → its blocked words. */
export type GeoBlockedWords = ReadonlyMap<string, GeoCountryWords>;

const SEPARATORS = /[.\-_\s]/g;
const COUNTRY = /^[A-Z]{2}$/;

function wordOf(raw: string): GeoWord {
  const word = raw.normalize("NFKC").toLowerCase().trim();
  const joined = word.replace(SEPARATORS, "");
  return { word, joined, skel: skeleton(joined).toLowerCase() };
}

/**
 * Parses the geography file: JSON `{ "CC": ["word", …] }`. Throws an AppError naming the problem.
 *
 * @example parseGeoBlockedWords('{ "DE": ["casino"] }').get("DE")?.[0].word // "casino"
 */
export function parseGeoBlockedWords(text: string, source = "GEO_BLOCKED_WORDS_FILE"): GeoBlockedWords {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `${source}: not JSON: ${(e as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new AppError("CONFIG_INVALID", `${source}: expected an object { "CC": ["word", …] }`);
  }
  const out = new Map<string, GeoWord[]>();
  for (const [cc, words] of Object.entries(json)) {
    const country = cc.trim().toUpperCase();
    if (!COUNTRY.test(country))
      throw new AppError("CONFIG_INVALID", `${source}: "${cc}" is not an ISO 3166 alpha-2 code`);
    if (!Array.isArray(words) || words.some((w) => typeof w !== "string")) {
      throw new AppError("CONFIG_INVALID", `${source}: ${cc} must be an array of strings`);
    }
    const list = (words as string[]).map(wordOf).filter((w) => w.joined.length > 0);
    out.set(country, [...(out.get(country) ?? []), ...list]);
  }
  return new Map([...out].map(([cc, list]) => [cc, compileWords(list)]));
}

function alternation(forms: string[]): RegExp | null {
  if (forms.length === 0) return null;
  // Longest first, so the reported word is the most specific one.
  const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "u");
}

/** Compiles a list of words for `findBlockedWord`. */
function compileWords(words: readonly GeoWord[]): GeoCountryWords {
  return {
    words,
    joined: alternation(words.map((w) => w.joined)),
    skel: alternation(words.map((w) => w.skel)),
    byJoined: new Map(words.map((w) => [w.joined, w.word])),
    bySkel: new Map(words.map((w) => [w.skel, w.word])),
  };
}

export function loadGeoBlockedWords(file: string | undefined): GeoBlockedWords {
  if (!file) return new Map();
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new AppError(
      "CONFIG_INVALID",
      `GEO_BLOCKED_WORDS_FILE: cannot read ${file}: ${(e as Error).message}`,
    );
  }
  return parseGeoBlockedWords(text);
}

// Skeletons of names seen on the request path, bounded: the set of names a country's callers ask
// for is large but hot names repeat, and a skeleton costs a few microseconds.
const MEMO_MAX = 20_000;
let memo = new Map<string, { joined: string; skel: string }>();

function formsOf(name: string): { joined: string; skel: string } {
  let f = memo.get(name);
  if (f) return f;
  const joined = name.replace(SEPARATORS, "");
  f = { joined, skel: skeleton(joined).toLowerCase() };
  if (memo.size >= MEMO_MAX) memo = new Map();
  memo.set(name, f);
  return f;
}

/**
 * The blocked word the name contains, as written or without separators (`ca-sino`), or as a
 * lookalike (`cаsino` with a Cyrillic а); `null` when none.
 */
export function findBlockedWord(name: string, c: GeoCountryWords): string | null {
  if (c.joined === null || c.skel === null) return null;
  const f = formsOf(name);
  const m = c.joined.exec(f.joined);
  if (m) return c.byJoined.get(m[0]) ?? m[0];
  const k = c.skel.exec(f.skel);
  return k ? (c.bySkel.get(k[0]) ?? k[0]) : null;
}

/**
 * The caller's country from the trusted header's value (`GEO_COUNTRY_HEADER`, e.g. `CF-IPCountry`):
 * an ISO 3166 alpha-2 code in upper case, or `null` when absent, malformed or unknown (`XX`).
 *
 * @example countryFromHeader("de") // "DE"
 */
export function countryFromHeader(value: string | string[] | undefined): string | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim().toUpperCase();
  if (!v || !COUNTRY.test(v) || v === "XX") return null;
  return v;
}

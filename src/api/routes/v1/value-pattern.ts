/**
 * JSON Schema patterns for the values v1 reads case-insensitively (network, provider, booleans),
 * generated from the same tables and the same folding the server matches with, so the schema (and
 * the OpenAPI document made from it) accepts exactly what the server accepts. JSON Schema has no
 * case-insensitive flag: each letter becomes a class of the characters that fold to it.
 *
 * @example
 * foldPattern(["ETH"], "upper") // → "(?:[Ee][Tt][Hh])"
 */

export type Fold = "upper" | "lower" | "ascii";

const escapeChar = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");

/**
 * For each string of ASCII letters that some other character folds to, those characters:
 * String.prototype.toUpperCase folds "ſ" to "S", "ı" to "I", "ﬆ" to "ST", "ß" to "SS"; only
 * characters of the BMP do so. Built once, on first use.
 */
let foldedFrom: Map<string, Map<string, string[]>> | null = null;
function sourcesOf(fold: "upper" | "lower"): Map<string, string[]> {
  foldedFrom ??= new Map([
    ["upper", new Map()],
    ["lower", new Map()],
  ]);
  const table = foldedFrom.get(fold) as Map<string, string[]>;
  if (table.size > 0) return table;
  for (let code = 0x41; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const c = String.fromCharCode(code);
    const f = fold === "upper" ? c.toUpperCase() : c.toLowerCase();
    if (f === c || !/^[A-Za-z]+$/.test(f)) continue;
    table.set(f, [...(table.get(f) ?? []), c]);
  }
  return table;
}

/**
 * A regular expression (source, no anchors) matching every string that `fold` maps onto one of
 * `values` (given in folded form). `separator`: a character of the values that also stands for a
 * run of these input characters (findProvider reads "unstoppable domains" as UNSTOPPABLE_DOMAINS).
 */
export function foldPattern(
  values: readonly string[],
  fold: Fold,
  separator?: { char: string; run: string },
): string {
  const sources = fold === "ascii" ? new Map<string, string[]>() : sourcesOf(fold);
  const one = (value: string, at: number): string => {
    if (at === value.length) return "";
    const c = value[at];
    if (separator !== undefined && c === separator.char)
      return `(?:${escapeChar(c)}|[${separator.run}]+)${one(value, at + 1)}`;
    // The single characters that fold to c (c itself, its other ASCII case, "ſ" for S …).
    const singles = new Set([
      c,
      /[a-z]/i.test(c) ? (fold === "lower" ? c.toUpperCase() : c.toLowerCase()) : c,
    ]);
    for (const s of sources.get(c) ?? []) singles.add(s);
    let out = `[${[...singles].map(escapeChar).join("")}]${one(value, at + 1)}`;
    // Characters folding to several letters (a ligature): one more branch where they start.
    for (const [folded, chars] of sources) {
      if (folded.length > 1 && value.startsWith(folded, at))
        out = `(?:${out}|[${chars.map(escapeChar).join("")}]${one(value, at + folded.length)})`;
    }
    return out;
  };
  return `(?:${values.map((v) => one(v, 0)).join("|")})`;
}

/**
 * A whole parameter value: `core`, with the whitespace around it that the server trims, or only
 * whitespace (an empty value counts as absent). Written so that no input backtracks more than once
 * per character (the leading run can only end where `core` or the end begins).
 */
export function trimmedPattern(core: string, blankIsAbsent: boolean): string {
  return blankIsAbsent ? `^\\s*(?:${core}\\s*)?$` : `^\\s*${core}\\s*$`;
}

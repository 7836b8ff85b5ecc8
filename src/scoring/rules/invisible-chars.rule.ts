import { isPlainAsciiName } from "../plain-name.js";
import type { BaseRule } from "../scoring.types.js";

// Emoji sequences legitimately use ZWJ and VS16 (👨‍👩‍👧); remove them before looking for invisibles.
const EMOJI_JOINS =
  /(\p{Extended_Pictographic}[\u{1F3FB}-\u{1F3FF}]?)\uFE0F?(?:\u200D(?=\p{Extended_Pictographic}))?/gu;
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Cc}]/u;

/**
 * The first invisible, bidi-control or control character of a name, as U+XXXX, or `null`. A plain
 * lower-case ASCII name (plain-name.ts) has none.
 */
export function findInvisible(name: string): string | null {
  if (isPlainAsciiName(name)) return null;
  return findInvisibleByScan(name);
}

/** The full scan, for any name (the reference of the fast path's test). */
export function findInvisibleByScan(name: string): string | null {
  const m = INVISIBLE.exec(name.replace(EMOJI_JOINS, "$1"));
  if (!m) return null;
  return `U+${(m[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Invisible characters make two different names look identical; bidi controls reorder what is shown. */
export const invisibleCharsRule: BaseRule = {
  name: "invisible-characters",
  weight: "spam",
  evaluate({ domain }) {
    const cp = findInvisible(domain.name);
    if (cp === null) return null;
    return {
      effect: 0,
      reason: `contains the invisible or bidi-control character ${cp}`,
      tags: ["spam:invisible"],
      spam: true,
    };
  },
};

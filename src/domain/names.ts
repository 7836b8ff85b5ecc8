import { ens_normalize } from "@adraffy/ens-normalize";
import punycode from "punycode/punycode.js";

/** Limits of docs/api.md: a name over 1,024 bytes or 255 labels is refused before any work. */
export const MAX_NAME_BYTES = 1024;
export const MAX_LABELS = 255;
// DNS caps a label at 63 octets, but on-chain names are not DNS names; this only keeps one label storable.
const MAX_LABEL_BYTES = 255;

export interface NormalizedName {
  /** Unicode, NFC, lower case: the form stored and returned. */
  name: string;
  /** Every label left of the TLD, joined by dots (`alice` for `alice.wallet`, `a.b` for `a.b.eth`). */
  sld: string;
  tld: string;
  labels: string[];
  /** The IDNA ASCII (punycode) form, used by DNS. */
  ascii: string;
}

export type NameResult = { ok: true; value: NormalizedName } | { ok: false; reason: string };

// Attacker-controlled input: controls, format characters (zero-width, bidi controls, tags, soft
// hyphen …), white space of every kind, lone surrogates, and default-ignorable code points (fillers,
// variation selectors, CGJ) render as nothing and are never part of a valid name. They are refused
// rather than stripped, so that a lookalike cannot silently resolve to the name it imitates.
// Unicode properties rather than a list, so that a space such as U+2002 cannot slip through.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}\p{Cs}\p{Default_Ignorable_Code_Point}\u2800\ufff9-\uffff]/u;
// The exceptions emoji need: ZWJ between pictographs (👩🏽‍💻), VS16 after an emoji (🏳️), and tag
// characters inside a subdivision flag (🏴 + tags + cancel tag). They are removed from a copy of the
// label before INVISIBLE is tested; anywhere else the same characters are invisible and refused.
const EMOJI_ZWJ =
  /(?<=(?:\p{Extended_Pictographic}|\p{Emoji_Modifier})\ufe0f?)\u200d(?=\p{Extended_Pictographic})/gu;
const EMOJI_VS16 = /(?<=\p{Emoji})\ufe0f/gu;
const EMOJI_TAG_FLAG = /\u{1f3f4}[\u{e0020}-\u{e007e}]+\u{e007f}/gu;
// Characters that look like the label separator: a label holding one would display as two labels.
const DOT_LOOKALIKE = /[\u2024\u3002\ufe52\uff0e\uff61]/;
// Printable ASCII other than letters, digits, hyphen and underscore has no place in a label.
const ASCII_PUNCT = /[!-,/:-@[-^`{-~]/;
// ENSIP-15 also allows `$` (and maps `'` to U+2019 before this check runs).
const ENS_ASCII_PUNCT = /[!-#%-,/:-@[-^`{-~]/;

type Labels = { ok: true; labels: string[] } | { ok: false; reason: string };

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

/**
 * Decodes an IDNA A-label (`xn--…`); other labels are returned unchanged. Returns `null` for a
 * label that is not valid punycode, decodes to plain ASCII (`xn--alice-` would be an alias of
 * `alice`), or is not the canonical encoding of what it decodes to.
 */
function toUnicodeLabel(label: string): string | null {
  const lower = label.toLowerCase();
  if (!lower.startsWith("xn--")) return label;
  const encoded = lower.slice(4);
  let decoded: string;
  try {
    decoded = punycode.decode(encoded);
  } catch {
    return null;
  }
  if (!/[^\x00-\x7f]/.test(decoded)) return null;
  if (punycode.encode(decoded) !== encoded) return null;
  return decoded;
}

/** The steps shared by both rules: limits, trim, root dot, split, punycode decoding. */
function splitLabels(input: string): Labels {
  // Bound the work on hostile input before trimming; the exact limit is checked on the trimmed name.
  if (input.length > 4 * MAX_NAME_BYTES) return fail(`longer than ${MAX_NAME_BYTES} bytes`);
  let s = input.trim();
  if (Buffer.byteLength(s, "utf8") > MAX_NAME_BYTES) return fail(`longer than ${MAX_NAME_BYTES} bytes`);
  if (s.endsWith(".")) s = s.slice(0, -1); // a fully qualified DNS name's root dot
  if (s.length === 0) return fail("empty");
  if (s.includes("\ufffd")) return fail("contains invalid UTF-8");
  const rawLabels = s.split(".");
  if (rawLabels.length > MAX_LABELS) return fail(`more than ${MAX_LABELS} labels`);
  if (rawLabels.length < 2) return fail("needs a second-level and a top-level label");
  const labels: string[] = [];
  for (const raw of rawLabels) {
    if (raw.length === 0) return fail("empty label");
    const uni = toUnicodeLabel(raw);
    if (uni === null) return fail(`invalid punycode label "${raw.slice(0, 64)}"`);
    // An A-label must encode a name already in normalized form (IDNA), not a variant of one.
    if (uni !== raw && uni.normalize("NFC").toLowerCase() !== uni) {
      return fail(`punycode label "${raw.slice(0, 64)}" does not encode a normalized label`);
    }
    labels.push(uni);
  }
  return { ok: true, labels };
}

const INVISIBLE_REASON = "contains control, invisible or white-space characters";

function hasInvisible(label: string): boolean {
  return INVISIBLE.test(
    label.replace(EMOJI_TAG_FLAG, "\u{1f3f4}").replace(EMOJI_ZWJ, "").replace(EMOJI_VS16, ""),
  );
}

function checkLabel(label: string, punct: RegExp): string | null {
  if (label.length === 0) return "empty label";
  if (DOT_LOOKALIKE.test(label)) return "contains a character that imitates a dot";
  if (hasInvisible(label)) return INVISIBLE_REASON;
  if (punct.test(label)) return "contains a character not allowed in a label";
  if (Buffer.byteLength(label, "utf8") > MAX_LABEL_BYTES)
    return `a label is longer than ${MAX_LABEL_BYTES} bytes`;
  return null;
}

function build(labels: string[], punct: RegExp): NameResult {
  if (labels.length > MAX_LABELS) return fail(`more than ${MAX_LABELS} labels`);
  if (labels.length < 2) return fail("needs a second-level and a top-level label");
  for (const label of labels) {
    const reason = checkLabel(label, punct);
    if (reason !== null) return fail(reason);
  }
  let ascii: string;
  try {
    ascii = labels.map((l) => (/^[\x00-\x7f]*$/.test(l) ? l : `xn--${punycode.encode(l)}`)).join(".");
  } catch {
    return fail("cannot be encoded as punycode");
  }
  return {
    ok: true,
    value: {
      name: labels.join("."),
      sld: labels.slice(0, -1).join("."),
      tld: labels[labels.length - 1],
      labels,
      ascii,
    },
  };
}

/**
 * Normalizes a full domain name for lookup and storage: trimmed, punycode labels decoded, Unicode
 * NFC, case-folded. Works for every provider; ENS names use {@link normalizeEnsName} instead.
 *
 * @example normalizeName(" Alice.WALLET ") // { ok: true, value: { name: "alice.wallet", … } }
 */
export function normalizeName(input: string): NameResult {
  const split = splitLabels(input);
  if (!split.ok) return split;
  return build(
    split.labels.map((l) => l.normalize("NFC").toLowerCase().normalize("NFC")),
    ASCII_PUNCT,
  );
}

/**
 * ENSIP-15 normalization (via @adraffy/ens-normalize) after the shared steps (limits, trim, root
 * dot, punycode, no invisible characters), then the same structure checks. ENSIP-15 decides the
 * characters, so a few names fail here that pass {@link normalizeName} (`a_b.eth`, `аlice.eth`) and
 * a few pass that it refuses (`$dollar.eth`, `a'b.eth` → `a’b.eth`). The reason names the
 * offending character.
 */
export function normalizeEnsName(input: string): NameResult {
  const split = splitLabels(input);
  if (!split.ok) return split;
  // ENSIP-15 silently drops some invisibles (ZWSP, soft hyphen, BOM, VS16); the API refuses them
  // in every namespace alike, as input that hides characters is a spoofing attempt, not a typo.
  if (split.labels.some(hasInvisible)) return fail(INVISIBLE_REASON);
  let ens: string;
  try {
    ens = ens_normalize(split.labels.join("."));
  } catch (e) {
    // The library wraps labels in LRM marks for display; they only make the reason harder to read.
    return fail(`not ENSIP-15 normalized: ${(e as Error).message.replace(/[\u200e\u200f]/g, "")}`);
  }
  return build(ens.split("."), ENS_ASCII_PUNCT);
}

/** Splits an already normalized name. */
export function splitName(name: string): { sld: string; tld: string } {
  const i = name.lastIndexOf(".");
  return i < 0 ? { sld: "", tld: name } : { sld: name.slice(0, i), tld: name.slice(i + 1) };
}

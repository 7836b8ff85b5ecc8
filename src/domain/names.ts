import { ens_normalize } from "@adraffy/ens-normalize";
import punycode from "punycode/punycode.js";

/** Limits of DESIGN §3: a name over 1,024 bytes or 255 labels is refused before any work. */
export const MAX_NAME_BYTES = 1024;
export const MAX_LABELS = 255;

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

// Attacker-controlled input: C0/C1 controls, zero-width and bidi controls, and white space are
// never part of a valid name. They are refused rather than stripped, so that a lookalike cannot
// silently resolve to the name it imitates.
const FORBIDDEN = /[\u0000-\u0020\u007f-\u009f\u00a0\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufe00-\ufe0e\ufeff\uffa0\ufff0-\uffff]/u;
// Printable ASCII other than letters, digits, hyphen and underscore has no place in a label.
const ASCII_PUNCT = /[!-,/:-@[-^`{-~]/;

function fail(reason: string): NameResult {
  return { ok: false, reason };
}

function toUnicodeLabel(label: string): string | null {
  if (!label.startsWith("xn--")) return label;
  try {
    const decoded = punycode.decode(label.slice(4));
    return decoded.length > 0 ? decoded : null;
  } catch {
    return null;
  }
}

/**
 * Normalizes a full domain name for lookup and storage: trimmed, punycode labels decoded, Unicode
 * NFC, case-folded. Works for every provider; ENS names additionally go through
 * {@link normalizeEnsName}.
 *
 * @example normalizeName(" Alice.WALLET ") // { ok: true, value: { name: "alice.wallet", … } }
 */
export function normalizeName(input: string): NameResult {
  if (Buffer.byteLength(input, "utf8") > MAX_NAME_BYTES) return fail(`longer than ${MAX_NAME_BYTES} bytes`);
  let s = input.trim();
  if (s.endsWith(".")) s = s.slice(0, -1); // a fully qualified DNS name's root dot
  if (s.length === 0) return fail("empty");
  if (s.includes("\ufffd")) return fail("contains invalid UTF-8");
  const rawLabels = s.split(".");
  if (rawLabels.length > MAX_LABELS) return fail(`more than ${MAX_LABELS} labels`);
  if (rawLabels.length < 2) return fail("needs a second-level and a top-level label");
  const labels: string[] = [];
  for (const raw of rawLabels) {
    if (raw.length === 0) return fail("empty label");
    const uni = toUnicodeLabel(raw.toLowerCase());
    if (uni === null) return fail(`invalid punycode label "${raw.slice(0, 64)}"`);
    const label = uni.normalize("NFC").toLowerCase().normalize("NFC");
    if (FORBIDDEN.test(label)) return fail("contains control, invisible or white-space characters");
    if (ASCII_PUNCT.test(label)) return fail("contains a character not allowed in a label");
    if (Buffer.byteLength(label, "utf8") > 255) return fail("a label is longer than 255 bytes");
    labels.push(label);
  }
  const name = labels.join(".");
  let ascii: string;
  try {
    ascii = labels.map((l) => (/^[\x00-\x7f]*$/.test(l) ? l : `xn--${punycode.encode(l)}`)).join(".");
  } catch {
    return fail("cannot be encoded as punycode");
  }
  return {
    ok: true,
    value: { name, sld: labels.slice(0, -1).join("."), tld: labels[labels.length - 1], labels, ascii },
  };
}

/** ENSIP-15 normalization (via @adraffy/ens-normalize); the reason names the offending character. */
export function normalizeEnsName(input: string): NameResult {
  const base = normalizeName(input);
  if (!base.ok) return base;
  let ens: string;
  try {
    ens = ens_normalize(base.value.name);
  } catch (e) {
    return fail(`not ENSIP-15 normalized: ${(e as Error).message}`);
  }
  if (ens === base.value.name) return base;
  return normalizeName(ens);
}

/** Splits an already normalized name. */
export function splitName(name: string): { sld: string; tld: string } {
  const i = name.lastIndexOf(".");
  return i < 0 ? { sld: "", tld: name } : { sld: name.slice(0, i), tld: name.slice(i + 1) };
}

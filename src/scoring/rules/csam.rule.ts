import { skeleton } from "../skeleton.js";

const SEPARATORS = /[.\-_\s]/g;

function forms(s: string): string[] {
  const plain = s.normalize("NFKC").toLowerCase();
  const joined = plain.replace(SEPARATORS, "");
  const skel = skeleton(joined).toLowerCase();
  return [plain, joined, skel];
}

// Term lists are loaded once and reused: their skeletons are computed once per list.
const termForms = new WeakMap<readonly string[], string[][]>();

function formsOfTerms(terms: readonly string[]): string[][] {
  let f = termForms.get(terms);
  if (!f) {
    f = terms.map(forms);
    termForms.set(terms, f);
  }
  return f;
}

/**
 * CSAM screening of a name against the configured term list (`CSAM_TERMS_FILE`): a term matches
 * anywhere in the name, in the name with separators removed (a-b-c), and in its TR39 skeleton (so a
 * Cyrillic lookalike of a term matches too). Returns the index of the first matching term, or -1.
 * A name that fails is never served by any endpoint nor by DNS.
 */
export function screenCsam(name: string, terms: readonly string[]): number {
  if (terms.length === 0) return -1;
  const [plain, joined, skel] = forms(name);
  const tf = formsOfTerms(terms);
  for (let i = 0; i < tf.length; i++) {
    const [tp, tj, ts] = tf[i];
    if (tj === "" || ts === "") continue;
    if (plain.includes(tp) || joined.includes(tj) || skel.includes(ts)) return i;
  }
  return -1;
}

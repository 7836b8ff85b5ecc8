/**
 * The common name: lower-case ASCII letters, digits and hyphens in non-empty dot-separated labels
 * (`alice.crypto`, `bench-u123.bench`). Nearly every indexed name is one, and for it the Unicode
 * rules have a known answer without their Unicode machinery: no invisible characters, one script,
 * and ENSIP-15 passes unless a label carries the `xx--` label extension. The rules take this fast
 * path first; `plain-name.test.ts` checks that it answers exactly as the full path over many names.
 *
 * @example isPlainAsciiName("alice.crypto") // true
 * @example isPlainAsciiName("Alice.crypto") // false: upper case goes the full path
 */
export function isPlainAsciiName(name: string): boolean {
  let labelLength = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2e) {
      if (labelLength === 0) return false;
      labelLength = 0;
      continue;
    }
    // a-z, 0-9, "-"
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d)) return false;
    labelLength++;
  }
  return labelLength > 0;
}

/** True when some label has hyphens at its 3rd and 4th characters (`xn--…`): ENSIP-15 refuses it. */
export function hasLabelExtension(name: string): boolean {
  for (let start = 0; start <= name.length; ) {
    let end = name.indexOf(".", start);
    if (end === -1) end = name.length;
    if (end - start >= 4 && name.charCodeAt(start + 2) === 0x2d && name.charCodeAt(start + 3) === 0x2d)
      return true;
    start = end + 1;
  }
  return false;
}

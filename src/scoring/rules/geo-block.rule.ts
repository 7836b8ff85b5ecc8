import { type GeoBlockedWords, findBlockedWord } from "../geography.js";

/**
 * Per-country blocked words (`GEO_BLOCKED_WORDS_FILE`): a domain containing one is excluded for
 * callers from that country (country from the trusted `GEO_COUNTRY_HEADER`).
 */
export function geoBlockedWordFor(
  name: string,
  country: string | null,
  words: GeoBlockedWords,
): string | null {
  if (country === null || words.size === 0) return null;
  const c = words.get(country);
  return c ? findBlockedWord(name, c) : null;
}

import { readFileSync } from "node:fs";
import { AppError } from "../domain/errors.js";
import { normalizeName } from "../domain/names.js";
import { type GeoBlockedWords, loadGeoBlockedWords } from "./geography.js";
import { loadIcannTlds } from "./iana-tlds.js";
import type { BaseSignalsContext, Blocklist } from "./scoring.types.js";

/** The operator's lists the base rules read (BaseSignalsContext without the index lookups). */
export type ScoringLists = Pick<BaseSignalsContext, "csamTerms" | "blocklist" | "kycOwners" | "icannTlds">;

function readList(file: string, variable: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `${variable}: cannot read ${file}: ${(e as Error).message}`);
  }
}

function contentLines(text: string): Array<{ line: string; n: number }> {
  return text
    .split(/\r?\n/)
    .map((l, i) => ({ line: l.replace(/#.*/, "").trim(), n: i + 1 }))
    .filter((l) => l.line !== "");
}

/** A term list: one term a line, `#` comments; NFKC lower case, duplicates dropped. */
export function parseTermList(text: string): string[] {
  return [...new Set(contentLines(text).map((l) => l.line.normalize("NFKC").toLowerCase()))];
}

/** The spam blocklist: full names (`scam.wallet`) and whole TLDs (`*.badtld`), one a line. */
export function parseBlocklist(text: string, source = "SPAM_BLOCKLIST_FILE"): Blocklist {
  const names = new Set<string>();
  const tlds = new Set<string>();
  for (const { line, n } of contentLines(text)) {
    const wildcard = line.startsWith("*.");
    const parsed = normalizeName(wildcard ? `x.${line.slice(2)}` : line);
    if (!parsed.ok || (wildcard && parsed.value.labels.length !== 2)) {
      throw new AppError(
        "CONFIG_INVALID",
        `${source}, line ${n}: "${line.slice(0, 80)}" is not a name or *.tld`,
      );
    }
    if (wildcard) tlds.add(parsed.value.tld);
    else names.add(parsed.value.name);
  }
  return { names, tlds };
}

export const EMPTY_BLOCKLIST: Blocklist = { names: new Set(), tlds: new Set() };

export interface ScoringFilesConfig {
  dataDir: string;
  csamTermsFile?: string | undefined;
  spamBlocklistFile?: string | undefined;
  geoBlockedWordsFile?: string | undefined;
  icannTldsFile?: string | undefined;
}

/**
 * Loads every list the scoring engine reads: files named by the configuration, the ICANN TLD list
 * and the KYC list (`kycOwners`, the store's `findKycOwners()`). Called once at start-up and after
 * `kyc import` / `tlds refresh`.
 */
export async function loadScoringLists(
  config: ScoringFilesConfig,
  kycOwners: ReadonlySet<string>,
): Promise<ScoringLists & { geoBlockedWords: GeoBlockedWords }> {
  return {
    csamTerms: config.csamTermsFile ? parseTermList(readList(config.csamTermsFile, "CSAM_TERMS_FILE")) : [],
    blocklist: config.spamBlocklistFile
      ? parseBlocklist(readList(config.spamBlocklistFile, "SPAM_BLOCKLIST_FILE"))
      : EMPTY_BLOCKLIST,
    kycOwners,
    icannTlds: loadIcannTlds(config),
    geoBlockedWords: loadGeoBlockedWords(config.geoBlockedWordsFile),
  };
}

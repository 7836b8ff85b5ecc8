import { existsSync, readFileSync, renameSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import punycode from "punycode/punycode.js";
import { AppError } from "../domain/errors.js";

/**
 * The ICANN root zone TLDs, for the icann-collision rule. A copy ships with the code
 * (scoring/data/iana-tlds.txt, IANA's tlds-alpha-by-domain.txt format); `omniname tlds refresh
 * FILE` writes a newer list to DATA_DIR/iana-tlds.txt, which then takes precedence.
 */
export const REFRESHED_TLDS_FILE = "iana-tlds.txt";

const LABEL = /^[A-Z0-9](?:[A-Z0-9-]{0,61}[A-Z0-9])?$/;

/**
 * Parses IANA's format: `#` comment lines, then one upper-case ASCII TLD a line (IDNs as `XN--`).
 * Returns the TLDs in the form names are stored: lower-case Unicode. Throws on a malformed line.
 */
export function parseIanaTlds(text: string, source = "TLD list"): Set<string> {
  const out = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const upper = line.toUpperCase();
    if (!LABEL.test(upper))
      throw new AppError("CONFIG_INVALID", `${source}, line ${i + 1}: "${line.slice(0, 80)}" is not a TLD`);
    let tld = upper.toLowerCase();
    if (tld.startsWith("xn--")) {
      try {
        tld = punycode.decode(tld.slice(4)).normalize("NFC").toLowerCase();
      } catch {
        throw new AppError("CONFIG_INVALID", `${source}, line ${i + 1}: invalid punycode "${line}"`);
      }
    }
    out.add(tld);
  }
  return out;
}

/** The shipped list: next to this module in the sources, or under src/ when running the build from dist/. */
export function shippedTldsPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const beside = join(here, "data", "iana-tlds.txt");
  if (existsSync(beside)) return beside;
  return resolve(here, "..", "..", "src", "scoring", "data", "iana-tlds.txt");
}

/** Which list is in force: ICANN_TLDS_FILE, else a refreshed DATA_DIR/iana-tlds.txt, else the shipped one. */
export function icannTldsPath(opts: {
  icannTldsFile?: string | undefined;
  dataDir?: string | undefined;
}): string {
  if (opts.icannTldsFile) return opts.icannTldsFile;
  if (opts.dataDir) {
    const refreshed = join(opts.dataDir, REFRESHED_TLDS_FILE);
    if (existsSync(refreshed)) return refreshed;
  }
  return shippedTldsPath();
}

export function loadIcannTlds(opts: {
  icannTldsFile?: string | undefined;
  dataDir?: string | undefined;
}): Set<string> {
  const path = icannTldsPath(opts);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `cannot read the ICANN TLD list ${path}: ${(e as Error).message}`);
  }
  return parseIanaTlds(text, path);
}

function toIanaLine(tld: string): string {
  return (/^[a-z0-9-]+$/.test(tld) ? tld : `xn--${punycode.encode(tld)}`).toUpperCase();
}

interface TldRefreshResult {
  path: string;
  count: number;
  added: string[];
  removed: string[];
}

/**
 * Validates an IANA list (`tlds-alpha-by-domain.txt`) and installs it at `dest`, atomically.
 * Refuses a file that cannot be the root zone (fewer than 100 TLDs or no `COM`), so a wrong file
 * cannot silently switch the icann-collision rule off. Compares with the list in force before.
 */
export function refreshIanaTlds(
  sourceFile: string,
  dest: string,
  previous: ReadonlySet<string>,
): TldRefreshResult {
  let text: string;
  try {
    text = readFileSync(sourceFile, "utf8");
  } catch (e) {
    throw new AppError("CONFIG_INVALID", `cannot read ${sourceFile}: ${(e as Error).message}`);
  }
  const tlds = parseIanaTlds(text, sourceFile);
  if (tlds.size < 100 || !tlds.has("com")) {
    throw new AppError(
      "CONFIG_INVALID",
      `${sourceFile} does not look like the IANA root zone list (${tlds.size} TLDs)`,
    );
  }
  const version =
    text
      .split(/\r?\n/)
      .find((l) => l.startsWith("#"))
      ?.replace(/^#\s*/, "") ?? "unversioned";
  const lines = [...tlds].map(toIanaLine).sort();
  mkdirSync(dirname(dest), { recursive: true });
  const tmp = `${dest}.${process.pid}.tmp`;
  writeFileSync(
    tmp,
    `# ${version}\n# Installed by omniname tlds refresh on ${new Date().toISOString()}\n${lines.join("\n")}\n`,
  );
  renameSync(tmp, dest);
  return {
    path: dest,
    count: tlds.size,
    added: [...tlds].filter((t) => !previous.has(t)).sort(),
    removed: [...previous].filter((t) => !tlds.has(t)).sort(),
  };
}

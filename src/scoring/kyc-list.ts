import { normalizeAddress } from "../domain/address.js";
import { AppError } from "../domain/errors.js";

/**
 * Parses a KYC list: one address a line, or CSV whose first column is the address (a header line is
 * skipped); `#` starts a comment. Throws with the line numbers of invalid addresses, so a partial
 * import never happens silently.
 */
export function parseKycFile(text: string, source = "KYC file"): string[] {
  const out = new Set<string>();
  const bad: number[] = [];
  let first = true;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/#.*/, "").trim();
    if (line === "") continue;
    const field = line
      .split(/[,;\t]/)[0]
      .trim()
      .replace(/^"|"$/g, "");
    const address = normalizeAddress(field);
    const header = first && address === null && !/^0x/i.test(field);
    first = false;
    if (address !== null) out.add(address);
    else if (!header) bad.push(i + 1);
  }
  if (bad.length > 0) {
    const shown = bad.slice(0, 10).join(", ");
    throw new AppError(
      "CONFIG_INVALID",
      `${source}: not an address on line${bad.length > 1 ? "s" : ""} ${shown}${bad.length > 10 ? ", …" : ""}`,
    );
  }
  return [...out];
}

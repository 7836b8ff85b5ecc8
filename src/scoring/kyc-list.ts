import type { Kysely } from "kysely";
import { normalizeAddress } from "../domain/address.js";
import { AppError } from "../domain/errors.js";
import type { Store } from "../store/store.js";

/** The table of migration 0004: owner addresses that passed the operator's KYC. */
interface KycDatabase {
  kyc_addresses: { address: string; source: string; imported_at: number };
}

function kycDb(store: Store): Kysely<KycDatabase> {
  return store.db as unknown as Kysely<KycDatabase>;
}

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
      "INVALID_PARAMETER",
      `${source}: not an address on line${bad.length > 1 ? "s" : ""} ${shown}${bad.length > 10 ? ", …" : ""}`,
    );
  }
  return [...out];
}

export async function loadKycOwners(store: Store): Promise<Set<string>> {
  const rows = await kycDb(store).selectFrom("kyc_addresses").select("address").execute();
  return new Set(rows.map((r) => r.address));
}

export interface KycImportResult {
  added: string[];
  removed: string[];
  total: number;
}

/**
 * Adds addresses to the KYC list (or, with `replace`, makes the list exactly these addresses), in
 * one transaction. Returns what changed, so only the affected owners' domains are rescored.
 */
export async function importKycAddresses(
  store: Store,
  addresses: readonly string[],
  opts: { replace?: boolean; source?: string; now?: number } = {},
): Promise<KycImportResult> {
  const now = opts.now ?? Date.now();
  return store.transaction(async (tx) => {
    const db = kycDb(tx);
    const before = new Set(
      (await db.selectFrom("kyc_addresses").select("address").execute()).map((r) => r.address),
    );
    const wanted = new Set(addresses);
    const added = [...wanted].filter((a) => !before.has(a));
    const removed = opts.replace ? [...before].filter((a) => !wanted.has(a)) : [];
    for (let i = 0; i < added.length; i += 500) {
      const rows = added
        .slice(i, i + 500)
        .map((address) => ({ address, source: opts.source ?? "", imported_at: now }));
      await db
        .insertInto("kyc_addresses")
        .values(rows)
        .onConflict((oc) => oc.column("address").doNothing())
        .execute();
    }
    for (let i = 0; i < removed.length; i += 500) {
      await db
        .deleteFrom("kyc_addresses")
        .where("address", "in", removed.slice(i, i + 500))
        .execute();
    }
    return { added, removed, total: before.size + added.length - removed.length };
  });
}

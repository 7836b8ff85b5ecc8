import { buildDnsName } from "./dns-name.js";

/**
 * The empty non-terminals of a set of names: every ancestor strictly between a name and its TLD
 * (`b.wallet` for `a.b.wallet`). Such a name exists in DNS (RFC 8020: NODATA, not NXDOMAIN) even
 * without data of its own. Only names of three labels or more have any.
 *
 * @example await buildEmptyNonTerminals(pages(["a.b.wallet", "alice.wallet"])) // Set { "b.wallet" }
 */
export async function buildEmptyNonTerminals(pages: AsyncIterable<string[]>): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const names of pages) {
    for (const name of names) {
      let dot = name.indexOf(".");
      // A two-label name (the common case) has no ancestor below its TLD.
      if (dot === -1 || name.indexOf(".", dot + 1) === -1) continue;
      const dns = buildDnsName(name);
      if (!dns.ok) continue;
      const n = dns.name;
      dot = n.indexOf(".");
      for (let next = n.indexOf(".", dot + 1); next !== -1; next = n.indexOf(".", dot + 1)) {
        out.add(n.slice(dot + 1));
        dot = next;
      }
    }
  }
  return out;
}

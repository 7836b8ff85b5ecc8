import { loadIcannTlds } from "../scoring/iana-tlds.js";
import { buildDnsName } from "./dns-name.js";

/**
 * The TLDs of the ICANN root in DNS form (A-labels, lower case), the zones omniname must never
 * serve or export: a provider that imports our `com` zone, or forwards `com` to us, would lose all
 * of `.com` to the few chain names under it (docs/dns.md, "ICANN TLDs are never shadowed").
 *
 * `stored` is the list in the form names are stored (lower-case Unicode), as the scoring loads it
 * (`ICANN_TLDS_FILE`, else a `tlds refresh`ed DATA_DIR list, else the shipped copy). Without one,
 * the shipped list: no caller can switch the guard off by forgetting to pass it.
 *
 * @example buildIcannZones(new Set(["com", "москва"])) // Set { "com", "xn--80adxhks" }
 */
export function buildIcannZones(stored?: ReadonlySet<string>): ReadonlySet<string> {
  const out = new Set<string>();
  for (const tld of stored ?? loadIcannTlds({})) {
    const dns = buildDnsName(tld);
    if (dns.ok) out.add(dns.name);
  }
  return out;
}

/** The TLD of a DNS-form name (its last label; the name itself for a TLD). */
export function tldOfDnsName(dnsName: string): string {
  return dnsName.slice(dnsName.lastIndexOf(".") + 1);
}

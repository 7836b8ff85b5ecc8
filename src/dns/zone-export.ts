import { closeSync, createWriteStream, existsSync, mkdirSync, openSync, readSync, renameSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { createScoringRanker, type Ranker } from "../resolution/rank.js";
import type { Resolution } from "../resolution/resolution.js";
import type { Store } from "../store/store.js";
import { dnsRankContext } from "./best-domain.js";
import { buildDnsName } from "./dns-name.js";
import type { DnssecKeys } from "./dnssec-keys.js";
import { buildIcannZones, tldOfDnsName } from "./icann-tlds.js";
import { buildNodeRRsets, ZONE_RECORD_KEYS } from "./resource-records.js";
import { indexProgress, nextSerial } from "./serial.js";
import { type ApexSettings, buildApex, type ZoneApex } from "./zone.js";
import { buildNodeLines, buildZoneHeader, parseZoneHeader } from "./zone-file.js";
import { buildNodeSignatureLines, buildSignedApexLines, NsecChain } from "./zone-signing.js";
import { createZoneWinners } from "./zone-winners.js";

/**
 * The SQLite read tuning of a one-pass export (`zone export`, the bench): no memory-mapped window,
 * an 8 MiB page cache and a read cache of 4,000 names (it serves only the rare names looked up
 * live, zone-winners.ts). A one-pass scan (`iterateDomainsByName`) rereads little, and every page
 * touched counts in RSS; at 1,000,000 domains the scan's CPU was the same with no window and a
 * 4 MiB cache as with a 16 MiB window and a 16 MiB cache (bench/README.md, "Scale").
 */
export const ZONE_EXPORT_SQLITE_READS = {
  mmapBytes: 0,
  cacheEntries: 4000,
  pageCacheBytes: 8 << 20,
} as const;

export interface ZoneExportOptions {
  outDir: string;
  /** TLDs to write (Unicode or A-label); absent: every TLD of the map. */
  tlds?: readonly string[];
  projectSettings?: Record<string, unknown>;
  nameServers: readonly string[];
  hostmaster: string;
  now: number;
  /**
   * Domains read from the store at a time (whole names): memory stays bounded by one page. Default
   * 250: a page of 1,000 lived long enough to be promoted out of V8's young generation (25 % of
   * the CPU in GC at 1,000,000 domains against 8 % with 250).
   */
  pageSize?: number;
  /** The ranker `resolution` ranks with (default: the scoring ranker): winners are picked with it. */
  ranker?: Ranker;
  /** The ICANN root's TLDs as stored (the scoring's list): never exported. Default: the shipped list. */
  icannTlds?: ReadonlySet<string>;
  /** DNSSEC=on: sign every zone with these keys (DNSKEY, RRSIGs, an NSEC chain; docs/dns.md). */
  dnssec?: DnssecKeys;
}

export interface ZoneExportResult {
  zones: Array<{ tld: string; file: string; serial: number; names: number }>;
  /** Names or records left out, one per line in DIR/skipped.tsv. */
  skipped: number;
  /**
   * TLDs of the ICANN root that the map holds names under, with how many domains each: never
   * written (docs/dns.md); each domain is also a line of skipped.tsv.
   */
  icann: Array<{ tld: string; domains: number }>;
}

/** The header of a file written before: enough bytes for its comment lines. */
function previousHeader(file: string): { serial: number; progress: number } | null {
  if (!existsSync(file)) return null;
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return parseZoneHeader(buf.toString("utf8", 0, n));
  } finally {
    closeSync(fd);
  }
}

/** The zone (DNS form) of a stored TLD, "" for none; each TLD's computed once (the map has few). */
function createZoneOf(): (tld: string) => string {
  const forms = new Map<string, string>();
  return (tld) => {
    let zone = forms.get(tld);
    if (zone === undefined) {
      const dns = buildDnsName(tld);
      zone = dns.ok ? dns.name : "";
      // A bound all the same: TLDs are chain data.
      if (forms.size >= 10_000) forms.clear();
      forms.set(tld, zone);
    }
    return zone;
  };
}

const tsv = (...fields: string[]) => `${fields.map((f) => f.replace(/[\t\n]/g, " ")).join("\t")}\n`;

/**
 * Writes one RFC 1035 master file per TLD (`DIR/<tld>.zone`): SOA (serial from the index's
 * progress, never lower than the file it replaces), NS, and every name's highest-scored domain.
 * The map is read in name order, page by page, every name's domains together: each name's winner
 * is picked in process (zone-winners.ts, the same as `findBestDomain`), and each page's lines are
 * written to one stream per file; the next page is read once the streams have drained, so memory
 * does not grow with the map; files are renamed into place at the end.
 *
 * @example await exportZones(store, resolution, { outDir: "zones", nameServers: ["ns1.example"], hostmaster: "hostmaster.example", now: Date.now() })
 */
export async function exportZones(
  store: Pick<Store, "domainMap" | "crawlerLog" | "scoring">,
  resolution: Resolution,
  opts: ZoneExportOptions,
): Promise<ZoneExportResult> {
  mkdirSync(opts.outDir, { recursive: true });
  const zoneOf = createZoneOf();
  const progress = indexProgress(await store.crawlerLog.listCheckpoints());
  const wanted = opts.tlds
    ? new Set(opts.tlds.map((t) => buildDnsName(t)).flatMap((r) => (r.ok ? [r.name] : [])))
    : null;
  const zones = new Map<
    string,
    {
      file: string;
      tmp: string;
      out: Writable;
      serial: number;
      names: number;
      apex: ZoneApex;
      nsec: NsecChain | null;
    }
  >();
  // Signatures made at `now`: inception an hour before it, expiry a week after (dnssec-sign.ts).
  const nowS = Math.floor(opts.now / 1000);
  const icannZones = buildIcannZones(opts.icannTlds);
  /** Domains seen under each ICANN TLD that was asked for (or under any, without --tld). */
  const icann = new Map<string, number>();
  for (const { tld } of await store.scoring.listTldFirstRegistrations()) {
    const dns = buildDnsName(tld);
    if (!dns.ok || zones.has(dns.name) || (wanted && !wanted.has(dns.name))) continue;
    if (icannZones.has(dns.name)) {
      icann.set(dns.name, 0);
      continue;
    }
    const file = join(opts.outDir, `${dns.name}.zone`);
    const serial = nextSerial(previousHeader(file), progress).serial;
    const settings: ApexSettings = { nameServers: opts.nameServers, hostmaster: opts.hostmaster, serial };
    const tmp = `${file}.tmp`;
    const out = createWriteStream(tmp);
    const apex = buildApex(dns.name, settings);
    out.write(buildZoneHeader(apex, progress));
    if (opts.dnssec) out.write(buildSignedApexLines(apex, opts.dnssec, nowS));
    zones.set(dns.name, {
      file,
      tmp,
      out,
      serial,
      names: 0,
      apex,
      nsec: opts.dnssec ? new NsecChain() : null,
    });
  }

  const skippedOut = createWriteStream(join(opts.outDir, "skipped.tsv"));
  skippedOut.write(tsv("name", "key", "reason"));
  let skipped = 0;
  // A write error (disk full) is kept and thrown after the page, never an unhandled 'error' event.
  let failure: Error | null = null;
  for (const out of [...[...zones.values()].map((z) => z.out), skippedOut])
    out.on("error", (e: Error) => {
      failure ??= e;
    });
  try {
    // Nothing asked for is in the map (`--tld` of no zone): no need to read it.
    if (zones.size > 0 || icann.size > 0) await writeZones();
  } catch (e) {
    for (const z of zones.values()) z.out.destroy();
    skippedOut.destroy();
    throw e;
  }
  if (opts.dnssec) for (const z of zones.values()) z.out.write(z.nsec!.buildLines(z.apex, opts.dnssec, nowS));
  await Promise.all([...[...zones.values()].map((z) => z.out), skippedOut].map(finish));
  for (const z of zones.values()) renameSync(z.tmp, z.file);
  return {
    zones: [...zones].map(([tld, z]) => ({ tld, file: z.file, serial: z.serial, names: z.names })),
    skipped,
    icann: [...icann].map(([tld, domains]) => ({ tld, domains })),
  };

  async function writeZones(): Promise<void> {
    const winners = createZoneWinners({
      ranker: opts.ranker ?? createScoringRanker(),
      resolution,
      ctx: dnsRankContext(opts.projectSettings ?? {}, opts.now),
    });
    // A page holds whole names (every candidate of a name), in name order: each name's winner is
    // picked in process, and the files list names in the stored names' order.
    for await (const page of store.domainMap.iterateDomainsByName(opts.pageSize ?? 250, {
      recordKeys: ZONE_RECORD_KEYS,
      readAhead: true,
    })) {
      const lines = new Map<string, string>();
      let report = "";
      for (let i = 0; i < page.length; ) {
        let end = i + 1;
        while (end < page.length && page[end].name === page[i].name) end++;
        const group = page.slice(i, end);
        i = end;
        for (const d of group) {
          const count = icann.get(zoneOf(d.tld));
          if (count === undefined) continue;
          icann.set(zoneOf(d.tld), count + 1);
          report += tsv(d.name, "", `under the ICANN TLD .${zoneOf(d.tld)}: never served (docs/dns.md)`);
          skipped++;
        }
        const inZones = group.filter((d) => zones.has(zoneOf(d.tld)));
        if (inZones.length === 0) continue;
        const dns = buildDnsName(group[0].name);
        if (!dns.ok) {
          for (const d of inZones) report += tsv(d.name, "", dns.reason);
          skipped += inZones.length;
          continue;
        }
        let best = winners.pickHere(group, dns.name);
        if (best === undefined) best = await winners.pick(group, dns.name);
        const key = tldOfDnsName(dns.name);
        const zone = zones.get(key);
        if (best === null || !inZones.includes(best) || zone === undefined) continue;
        const node = buildNodeRRsets(best.records, dns.name);
        for (const s of node.skipped) {
          report += tsv(dns.name, s.key, s.reason);
          skipped++;
        }
        let text = buildNodeLines(dns.name, node.rrsets);
        if (opts.dnssec && node.rrsets.length > 0) {
          text += buildNodeSignatureLines(key, dns.name, node.rrsets, opts.dnssec, nowS);
          zone.nsec!.add(dns.name, node.rrsets);
        }
        lines.set(key, (lines.get(key) ?? "") + text);
        zone.names++;
      }
      // Backpressure: the next page is read once every stream written to has drained.
      const full: Promise<unknown>[] = [];
      for (const [zone, text] of lines)
        if (text.length > 0 && !zones.get(zone)!.out.write(text))
          full.push(once(zones.get(zone)!.out, "drain"));
      if (report.length > 0 && !skippedOut.write(report)) full.push(once(skippedOut, "drain"));
      await Promise.all(full);
      if (failure !== null) throw failure;
    }
  }
}

/** Ends a write stream and waits until its file is written and closed. */
function finish(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    out.once("error", reject);
    out.end(() => resolve());
  });
}

import type { Resolution } from "../resolution/resolution.js";
import type { CrawlerLog } from "../store/crawler-log.port.js";
import type { ScoringData } from "../store/scoring-data.port.js";
import { dnsRankContext, findBestDomain } from "./best-domain.js";
import { buildDnsName } from "./dns-name.js";
import { buildEmptyNonTerminals } from "./empty-non-terminals.js";
import { buildNodeRRsets, type RRset } from "./resource-records.js";
import { indexProgress, nextSerial, type SerialState } from "./serial.js";
import { buildApex, type ZoneApex, type ZoneLookup } from "./zone.js";

export interface StoreZoneLookupOptions {
  resolution: Resolution;
  store: Pick<ScoringData, "listTldFirstRegistrations" | "iterateDomainNames"> &
    Pick<CrawlerLog, "listCheckpoints">;
  nameServers: readonly string[];
  hostmaster: string;
  /** The project's settings (the public endpoints: {}). */
  projectSettings?: Record<string, unknown>;
  clock: () => number;
  /** How long the set of served TLDs and the serial are reused before being read again. */
  refreshMs?: number;
  /** How long the set of empty non-terminals is reused: it takes a scan of every name. */
  entRefreshMs?: number;
}

/** The live zones, and the same zones answered under a project's settings (its own DoH). */
export interface StoreZoneLookup extends ZoneLookup {
  /** The same zones and serial, each name ranked under `projectSettings`. */
  forProject(projectSettings: Record<string, unknown>): ZoneLookup;
}

/**
 * The live zones: every TLD of the map is a zone, and every name is answered from the store at
 * query time through resolution, so a name registered on chain is answered without a reload. The
 * TLD set and the SOA serial are read again every `refreshMs` (default 5 s): a new TLD is served
 * within that time. The empty non-terminals take a scan of every name: every `entRefreshMs`
 * (default 60 s), in the background after the first.
 */
export function createStoreZoneLookup(opts: StoreZoneLookupOptions): StoreZoneLookup {
  const refreshMs = opts.refreshMs ?? 5_000;
  const entRefreshMs = opts.entRefreshMs ?? 60_000;
  let emptyNonTerminals = new Set<string>();
  let entLoadedAt = Number.NEGATIVE_INFINITY;
  const settings = opts.projectSettings ?? {};
  let zones = new Map<string, ZoneApex>();
  let serial: SerialState | null = null;
  let loadedAt = Number.NEGATIVE_INFINITY;
  let loading: Promise<void> | null = null;
  // A domain's RRsets depend only on its records and name. The SQLite store hands out the same
  // frozen domain object until its next commit, so they are built once per domain and commit.
  const rrsetsOf = new WeakMap<object, RRset[]>();

  async function load(): Promise<void> {
    const [tlds, checkpoints] = await Promise.all([
      opts.store.listTldFirstRegistrations(),
      opts.store.listCheckpoints(),
    ]);
    serial = nextSerial(serial, indexProgress(checkpoints));
    const next = new Map<string, ZoneApex>();
    for (const { tld } of tlds) {
      const dns = buildDnsName(tld);
      if (dns.ok && !next.has(dns.name))
        next.set(
          dns.name,
          buildApex(dns.name, {
            nameServers: opts.nameServers,
            hostmaster: opts.hostmaster,
            serial: serial.serial,
          }),
        );
    }
    zones = next;
    if (opts.clock() - entLoadedAt >= entRefreshMs) {
      emptyNonTerminals = await buildEmptyNonTerminals(opts.store.iterateDomainNames(5000));
      entLoadedAt = opts.clock();
    }
    loadedAt = opts.clock();
  }

  async function current(): Promise<Map<string, ZoneApex>> {
    if (opts.clock() - loadedAt >= refreshMs) {
      loading ??= load().finally(() => {
        loading = null;
      });
      // The first load is awaited; later ones refresh in the background (stale while revalidating).
      if (loadedAt === Number.NEGATIVE_INFINITY) await loading;
      else loading.catch(() => {});
    }
    return zones;
  }

  async function findZone(name: string): Promise<ZoneApex | null> {
    const map = await current();
    const last = name.slice(name.lastIndexOf(".") + 1);
    return map.get(last) ?? null;
  }

  async function findNode(name: string, projectSettings: Record<string, unknown>): Promise<RRset[] | null> {
    const best = await findBestDomain(opts.resolution, name, dnsRankContext(projectSettings, opts.clock()));
    // No data of its own but names below it: it exists (NODATA), it is no NXDOMAIN.
    if (best === null) return emptyNonTerminals.has(name) ? [] : null;
    let rrsets = rrsetsOf.get(best.domain);
    if (rrsets === undefined) {
      rrsets = buildNodeRRsets(best.domain.records, name).rrsets;
      if (Object.isFrozen(best.domain)) rrsetsOf.set(best.domain, rrsets);
    }
    // A domain with nothing to serve is no DNS name, as in the zone files (where it has no line).
    return rrsets.length === 0 && !emptyNonTerminals.has(name) ? null : rrsets;
  }

  function lookupWith(projectSettings: Record<string, unknown>): ZoneLookup {
    return { findZone, findNode: (name) => findNode(name, projectSettings) };
  }

  return { ...lookupWith(settings), forProject: lookupWith };
}

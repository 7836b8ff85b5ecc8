import punycode from "punycode/punycode.js";
import type { Resolution } from "../resolution/resolution.js";
import type { CrawlerLog } from "../store/crawler-log.port.js";
import type { DomainMap } from "../store/domain-map.port.js";
import type { ScoringData } from "../store/scoring-data.port.js";
import { dnsRankContext, findBestDomain } from "./best-domain.js";
import { buildDnsName } from "./dns-name.js";
import { buildIcannZones, tldOfDnsName } from "./icann-tlds.js";
import { buildNodeRRsets, type RRset } from "./resource-records.js";
import { indexProgress, nextSerial, type SerialState } from "./serial.js";
import type { ZoneSerialSource } from "./shared-serial.js";
import { type AnswerMeta, buildApex, type ZoneApex, type ZoneLookup } from "./zone.js";

export interface StoreZoneLookupOptions {
  resolution: Resolution;
  store: {
    scoring: Pick<ScoringData, "listTldFirstRegistrations">;
    crawlerLog: Pick<CrawlerLog, "listCheckpoints">;
    domainMap: Pick<DomainMap, "hasDescendant" | "readVersion">;
  };
  nameServers: readonly string[];
  hostmaster: string;
  /** The project's settings (the public endpoints: {}). */
  projectSettings?: Record<string, unknown>;
  clock: () => number;
  /** How long the set of served TLDs and the serial are reused before being read again. */
  refreshMs?: number;
  /**
   * A query for a TLD that is not among the zones as last read reads them again when the map has
   * changed since (its read version), at most this often. Default 250 ms.
   */
  missRefreshMs?: number;
  /**
   * The ICANN root's TLDs as stored (lower-case Unicode; the scoring's list). Never zones: their
   * names and the TLDs themselves are REFUSED. Default: the shipped list.
   */
  icannTlds?: ReadonlySet<string>;
  /**
   * The zones' serial shared by every DNS process (shared-serial.ts; the zone transfers read the
   * same one, so SOA answers and transfers agree). Absent: this process's own serial from the
   * index's progress, as the zone files (one process alone: tests, tools).
   */
  serial?: ZoneSerialSource;
}

/** The live zones, and the same zones answered under a project's settings (its own DoH). */
export interface StoreZoneLookup extends ZoneLookup {
  /** The same zones and serial, each name ranked under `projectSettings`. */
  forProject(projectSettings: Record<string, unknown>): ZoneLookup;
  /**
   * The state the public zones' answers derive from, as two numbers: the map's read version and the
   * zones' version (the TLD set and the serial, bumped only when they change). An answer computed
   * after reading a stamp stays exact while the stamp stays equal (and until its `validUntil`).
   * Null when the store gives no exact change signal (then nothing may be cached). Also starts a
   * due refresh of the zones, as a query would.
   */
  answerStamp(): AnswerStamp | null;
  /** Reads the TLD set and the serial again now (the zone transfers, after the serial moved). */
  reload(): Promise<void>;
}

export interface AnswerStamp {
  map: number;
  zones: number;
}

/**
 * The live zones: every TLD of the map but those of the ICANN root is a zone, and every name is answered from the store at
 * query time through resolution, so a name registered on chain is answered without a reload. The
 * TLD set and the SOA serial are read again every `refreshMs` (default 5 s), and sooner for a
 * query whose TLD is not among them when the map has changed since they were read (at most every
 * `missRefreshMs`, 250 ms): that query waits for the new set, so a TLD registered a moment ago, or
 * every TLD of an index that was still empty when the zones were first read (the DNS role starts
 * before the crawler's first sync ends), is not refused. A name without a domain of its own but
 * with names below it (an empty non-terminal, `b.wallet` for `a.b.wallet`) is found by asking the
 * store at query time (one index range scan), so it is right the moment a name below it is
 * registered.
 */
export function createStoreZoneLookup(opts: StoreZoneLookupOptions): StoreZoneLookup {
  const refreshMs = opts.refreshMs ?? 5_000;
  const missRefreshMs = opts.missRefreshMs ?? 250;
  const settings = opts.projectSettings ?? {};
  const icannZones = buildIcannZones(opts.icannTlds);
  let zones = new Map<string, ZoneApex>();
  /** Bumped whenever `zones` is replaced by a different set or serial. */
  let zonesVersion = 0;
  let serial: SerialState | null = null;
  let loadedAt = Number.NEGATIVE_INFINITY;
  /** The map's read version when the zones were last read (null: the store gives none). */
  let loadedVersion: number | null = null;
  /** When they were last read, on the monotonic clock (the miss refresh's bound is real time). */
  let loadedAtMono = Number.NEGATIVE_INFINITY;
  let loading: Promise<void> | null = null;

  async function load(): Promise<void> {
    // Read before the queries: a commit between the two makes the next miss read again.
    const version = opts.store.domainMap.readVersion();
    const [tlds, checkpoints] = await Promise.all([
      opts.store.scoring.listTldFirstRegistrations(),
      opts.store.crawlerLog.listCheckpoints(),
    ]);
    serial = nextSerial(serial, indexProgress(checkpoints));
    const served = opts.serial === undefined ? serial.serial : await opts.serial.ensure();
    const next = new Map<string, ZoneApex>();
    for (const { tld } of tlds) {
      const dns = buildDnsName(tld);
      if (dns.ok && !next.has(dns.name) && !icannZones.has(dns.name))
        next.set(dns.name, apexOf(dns.name, served));
    }
    if (!sameZones(zones, next)) {
      zones = next;
      zonesVersion++;
    }
    loadedAt = opts.clock();
    loadedAtMono = performance.now();
    loadedVersion = version;
  }

  /** The load in flight, or a new one: concurrent callers share it. */
  function startLoad(): Promise<void> {
    loading ??= load().finally(() => {
      loading = null;
    });
    loading.catch(() => {});
    return loading;
  }

  /** Starts a load when one is due; the caller awaits it only for the first (stale while revalidating). */
  function refreshIfDue(): Promise<void> | null {
    if (opts.clock() - loadedAt < refreshMs) return null;
    return startLoad();
  }

  function apexOf(origin: string, soaSerial: number): ZoneApex {
    return buildApex(origin, {
      nameServers: opts.nameServers,
      hostmaster: opts.hostmaster,
      serial: soaSerial,
    });
  }

  /**
   * Puts the shared serial's answer of this instant into the zones (a new version when it
   * switched: cached answers made before carry the old one). False when the process must read the
   * serial first (`opts.serial.ensure`). Synchronous: it runs on every answer-cache hit.
   */
  function syncSerial(): boolean {
    if (opts.serial === undefined) return true;
    const now = opts.serial.current();
    if (now === null) return false;
    const first = zones.values().next();
    if (first.done || first.value.soa.serial === now) return true;
    const next = new Map<string, ZoneApex>();
    for (const origin of zones.keys()) next.set(origin, apexOf(origin, now));
    zones = next;
    zonesVersion++;
    return true;
  }

  async function current(): Promise<Map<string, ZoneApex>> {
    const due = refreshIfDue();
    if (due !== null && loadedAt === Number.NEGATIVE_INFINITY) await due;
    if (!syncSerial()) {
      await opts.serial?.ensure();
      syncSerial();
    }
    return zones;
  }

  async function findZone(name: string): Promise<ZoneApex | null> {
    const map = await current();
    const last = tldOfDnsName(name);
    const zone = map.get(last);
    if (zone !== undefined) return zone;
    // An ICANN TLD is never ours, however many chain names sit under it: no reload can change that.
    if (icannZones.has(last)) return null;
    // Not a zone as last read: if the map changed since, the TLD may be new. Read again (shared
    // with concurrent misses and with a due refresh) and answer from the new set; a failed read
    // leaves the answer to the set as it was.
    const version = opts.store.domainMap.readVersion();
    if (
      loading === null &&
      (version === null || version === loadedVersion || performance.now() - loadedAtMono < missRefreshMs)
    )
      return null;
    await startLoad().catch(() => {});
    return zones.get(last) ?? null;
  }

  async function findNode(
    name: string,
    projectSettings: Record<string, unknown>,
    meta?: AnswerMeta,
  ): Promise<RRset[] | null> {
    const best = await findBestDomain(
      opts.resolution,
      name,
      dnsRankContext(projectSettings, opts.clock()),
      meta,
    );
    // No data of its own but names below it: it exists (NODATA), it is no NXDOMAIN.
    if (best === null) return (await hasNamesBelow(opts.store.domainMap, name)) ? [] : null;
    // Built for each answer: kept on the domain object (a WeakMap) they cost the scavenger more
    // than they saved (docs/dns.md, "Latency"); repeated queries are the answer cache's.
    const rrsets = buildNodeRRsets(best.domain.records, name).rrsets;
    // A domain with nothing to serve is no DNS name, as in the zone files (where it has no line).
    return rrsets.length === 0 && !(await hasNamesBelow(opts.store.domainMap, name)) ? null : rrsets;
  }

  function lookupWith(projectSettings: Record<string, unknown>): ZoneLookup {
    return { findZone, findNode: (name, _zone, meta) => findNode(name, projectSettings, meta) };
  }

  function answerStamp(): AnswerStamp | null {
    const map = opts.store.domainMap.readVersion();
    if (map === null || loadedAt === Number.NEGATIVE_INFINITY) return null;
    refreshIfDue();
    // A serial not read recently enough: computed answers wait for it, none is cached meanwhile.
    if (!syncSerial()) return null;
    return { map, zones: zonesVersion };
  }

  /** A load that starts now: one in flight may have read the state before the caller's change. */
  async function reload(): Promise<void> {
    await loading?.catch(() => {});
    await startLoad();
  }

  return { ...lookupWith(settings), forProject: lookupWith, answerStamp, reload };
}

/** Whether two zone sets serve the same TLDs with the same serial (their answers are the same). */
function sameZones(a: Map<string, ZoneApex>, b: Map<string, ZoneApex>): boolean {
  if (a.size !== b.size) return false;
  for (const [origin, zone] of b) {
    const old = a.get(origin);
    if (old === undefined || old.soa.serial !== zone.soa.serial) return false;
  }
  return true;
}

/**
 * Whether the store holds a name strictly below this DNS name: asked under its stored (Unicode)
 * form, and under the A-label form too when a label is an A-label (a name stored as `xn--…`).
 */
async function hasNamesBelow(store: Pick<DomainMap, "hasDescendant">, dnsName: string): Promise<boolean> {
  const stored = storedFormOf(dnsName);
  if (stored !== null && (await store.hasDescendant(stored))) return true;
  return stored !== dnsName && store.hasDescendant(dnsName);
}

/** The stored form of a DNS name: its A-labels decoded (`xn--caf-dma.eth` → `café.eth`). */
function storedFormOf(dnsName: string): string | null {
  try {
    return dnsName
      .split(".")
      .map((l) => (l.startsWith("xn--") ? punycode.decode(l.slice(4)) : l))
      .join(".");
  } catch {
    return null;
  }
}

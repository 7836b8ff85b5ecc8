import type { DomainWithRecords } from "../domain/types.js";
import type { Ranker } from "../resolution/rank.js";
import { createResolution } from "../resolution/resolution.js";
import type { Store } from "../store/store.js";
import { dnsRankContext } from "./best-domain.js";
import { buildDnsName } from "./dns-name.js";
import { buildIcannZones, tldOfDnsName } from "./icann-tlds.js";
import { buildNodeRRsets, ZONE_RECORD_KEYS } from "./resource-records.js";
import { indexProgress, nextSerial, type SerialState } from "./serial.js";
import type { ZoneSerialSource } from "./shared-serial.js";
import { type ApexSettings, buildApex, type ZoneApex } from "./zone.js";
import { rrsetBytes } from "./xfr-wire.js";
import { createZoneWinners } from "./zone-winners.js";

/** One version of a zone: its apex and every RR below it, wire-encoded, in name order. */
export interface ZoneVersion {
  apex: ZoneApex;
  /** Owner → its RRs on the wire (uncompressed). */
  nodes: Map<string, Buffer[]>;
}

/** What changed from one serial to the next (RFC 1995's difference sequence). */
export interface ZoneDiff {
  from: ZoneApex;
  to: ZoneApex;
  deleted: Buffer[];
  added: Buffer[];
}

export interface XfrZonesOptions {
  store: Pick<Store, "readSnapshot" | "crawlerLog">;
  ranker: Ranker;
  apex: Omit<ApexSettings, "serial">;
  icannTlds?: ReadonlySet<string>;
  clock: () => number;
  /** Differences kept per zone (older serials get an AXFR-style answer). Default 64. */
  historyLength?: number;
  /** RRs kept across a zone's differences at most. Default 1,000,000. */
  historyRRs?: number;
  /**
   * The serial shared by every DNS process (shared-serial.ts): a new version is read when it
   * switches, and carries it. Absent: this process's own serial from the index's progress.
   */
  serial?: ZoneSerialSource;
}

/**
 * The zones as the transfers serve them. A version is read in one read transaction
 * (`readSnapshot`): the serial (from the checkpoints) and every name of the map at that same
 * commit, so an AXFR is a consistent snapshot at one serial while the crawler writes. Each new
 * version is compared with the one before it, and the difference is kept for IXFR (as BIND's
 * `ixfr-from-differences` does: the store's journal holds chain logs, not RR changes).
 */
export class XfrZones {
  private serialState: SerialState | null = null;
  private zones = new Map<string, ZoneVersion>();
  private history = new Map<string, ZoneDiff[]>();
  private building: Promise<string[]> | null = null;
  private readonly icann: ReadonlySet<string>;

  constructor(private readonly opts: XfrZonesOptions) {
    this.icann = buildIcannZones(opts.icannTlds);
  }

  /** The current version of a zone (null: not a zone of ours). */
  zone(origin: string): ZoneVersion | null {
    return this.zones.get(origin) ?? null;
  }

  origins(): string[] {
    return [...this.zones.keys()];
  }

  /**
   * The differences leading from `serial` to the current version, oldest first; [] when `serial`
   * is the current one; null when the history does not reach back to it (answer with the zone).
   */
  diffsSince(origin: string, serial: number): ZoneDiff[] | null {
    const current = this.zones.get(origin);
    if (current === undefined) return null;
    if (serial === current.apex.soa.serial) return [];
    const diffs = this.history.get(origin) ?? [];
    const at = diffs.findIndex((d) => d.from.soa.serial === serial);
    return at === -1 ? null : diffs.slice(at);
  }

  /** The current versions' serial (null before the first read). */
  serial(): number | null {
    return this.serialState?.serial ?? null;
  }

  /** The progress the current versions were read at (null before the first read). */
  progress(): number | null {
    return this.serialState?.progress ?? null;
  }

  /**
   * Reads a new version of every zone when the index moved since the last one (one read at a
   * time: concurrent callers share it). Resolves with the zones whose serial changed.
   */
  async refresh(): Promise<string[]> {
    const changed = await this.buildOnce();
    // A build already in flight may have started before the shared serial switched: a transfer
    // must not answer an older serial than the SOA queries of this instant.
    const now = this.opts.serial?.current() ?? null;
    if (now !== null && now !== this.serial()) changed.push(...(await this.buildOnce()));
    return changed;
  }

  private buildOnce(): Promise<string[]> {
    this.building ??= this.build().finally(() => {
      this.building = null;
    });
    return this.building;
  }

  private async build(): Promise<string[]> {
    const serial = this.opts.serial === undefined ? await this.ownSerial() : await this.sharedSerial();
    if (serial === null) return [];
    const read = serial.read;
    const changed: string[] = [];
    const next = new Map<string, ZoneVersion>();
    for (const [origin, nodes] of read.zones) {
      const apex = buildApex(origin, { ...this.opts.apex, serial: serial.serial });
      const version: ZoneVersion = { apex, nodes };
      next.set(origin, version);
      const before = this.zones.get(origin);
      if (before !== undefined && before.apex.soa.serial === apex.soa.serial) continue;
      changed.push(origin);
      if (before !== undefined) this.remember(origin, diffOf(before, version));
    }
    for (const origin of this.zones.keys()) if (!next.has(origin)) this.history.delete(origin);
    this.zones = next;
    this.serialState = { serial: serial.serial, progress: read.progress };
    return changed;
  }

  /** This process's own serial: a new version when the index's progress moved. */
  private async ownSerial(): Promise<{ serial: number; read: ZonesRead } | null> {
    const progress = indexProgress(await this.opts.store.crawlerLog.listCheckpoints());
    if (this.serialState !== null && progress === this.serialState.progress) return null;
    const read = await this.opts.store.readSnapshot((snap) => this.readAll(snap));
    return { serial: nextSerial(this.serialState, read.progress).serial, read };
  }

  /**
   * The shared serial: a new version when the serial every process answers switched, read after
   * the switch (the record's progress was committed before it was written, so the snapshot holds
   * at least what the serial stands for). Each process reads its own snapshot: a block applied in
   * the moment between two processes' reads is in one's version of the serial and not in the
   * other's until the next serial (docs/dns.md).
   */
  private async sharedSerial(): Promise<{ serial: number; read: ZonesRead } | null> {
    const serial = await this.opts.serial!.ensure();
    if (this.serialState !== null && serial === this.serialState.serial) return null;
    return { serial, read: await this.opts.store.readSnapshot((snap) => this.readAll(snap)) };
  }

  private remember(origin: string, diff: ZoneDiff): void {
    const diffs = this.history.get(origin) ?? [];
    diffs.push(diff);
    const maxLength = this.opts.historyLength ?? 64;
    const maxRRs = this.opts.historyRRs ?? 1_000_000;
    let rrs = diffs.reduce((n, d) => n + d.added.length + d.deleted.length, 0);
    while (diffs.length > maxLength || (diffs.length > 0 && rrs > maxRRs)) {
      const dropped = diffs.shift()!;
      rrs -= dropped.added.length + dropped.deleted.length;
    }
    this.history.set(origin, diffs);
  }

  /** Every zone's nodes, read on one snapshot of the store. */
  private async readAll(snap: Store): Promise<ZonesRead> {
    const progress = indexProgress(await snap.crawlerLog.listCheckpoints());
    const zones = new Map<string, Map<string, Buffer[]>>();
    for (const { tld } of await snap.scoring.listTldFirstRegistrations()) {
      const dns = buildDnsName(tld);
      if (dns.ok && !this.icann.has(dns.name)) zones.set(dns.name, new Map());
    }
    const winners = createZoneWinners({
      ranker: this.opts.ranker,
      // Names asked of the ranking itself are read on the same snapshot.
      resolution: createResolution({ store: snap.domainMap, ranker: this.opts.ranker }),
      ctx: dnsRankContext({}, this.opts.clock()),
    });
    for await (const page of snap.domainMap.iterateDomainsByName(1000, { recordKeys: ZONE_RECORD_KEYS })) {
      for (let i = 0; i < page.length; ) {
        let end = i + 1;
        while (end < page.length && page[end].name === page[i].name) end++;
        const group: DomainWithRecords[] = page.slice(i, end);
        i = end;
        const dns = buildDnsName(group[0].name);
        if (!dns.ok) continue;
        const nodes = zones.get(tldOfDnsName(dns.name));
        if (nodes === undefined || dns.name === tldOfDnsName(dns.name)) continue;
        const best = await winners.pick(group, dns.name);
        if (best === null) continue;
        const rrsets = buildNodeRRsets(best.records, dns.name).rrsets;
        // A domain with nothing to serve is no DNS name, as in the zone files.
        if (rrsets.length > 0)
          nodes.set(
            dns.name,
            rrsets.flatMap((s) => rrsetBytes(dns.name, s)),
          );
      }
    }
    return { progress, zones };
  }
}

/** Every zone's nodes at one commit, and the index's progress at that commit. */
interface ZonesRead {
  progress: number;
  zones: Map<string, Map<string, Buffer[]>>;
}

/** The RRs deleted and added from one version to the next (RRs compared byte for byte). */
function diffOf(before: ZoneVersion, after: ZoneVersion): ZoneDiff {
  const deleted: Buffer[] = [];
  const added: Buffer[] = [];
  for (const [owner, rrs] of before.nodes) {
    const now = after.nodes.get(owner);
    if (now === undefined) deleted.push(...rrs);
    else if (!sameRRs(rrs, now)) {
      const keep = new Set(now.map((b) => b.toString("latin1")));
      const had = new Set(rrs.map((b) => b.toString("latin1")));
      deleted.push(...rrs.filter((b) => !keep.has(b.toString("latin1"))));
      added.push(...now.filter((b) => !had.has(b.toString("latin1"))));
    }
  }
  for (const [owner, rrs] of after.nodes) if (!before.nodes.has(owner)) added.push(...rrs);
  return { from: before.apex, to: after.apex, deleted, added };
}

function sameRRs(a: Buffer[], b: Buffer[]): boolean {
  return a.length === b.length && a.every((x, i) => x.equals(b[i]));
}

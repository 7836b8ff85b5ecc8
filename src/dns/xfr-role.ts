import type { AppContext } from "../app-context.js";
import { loadIcannTlds } from "../scoring/iana-tlds.js";
import { createNotifier, type Notifier, parseNotifyTargets } from "./notify.js";
import type { ZoneSerialSource } from "./shared-serial.js";
import type { StoreZoneLookup } from "./store-zone-lookup.js";
import { parseTsigKeys } from "./tsig.js";
import { createXfrService, type XfrService } from "./xfr-server.js";
import { XfrZones } from "./xfr-zones.js";

/** How often the index's progress is read to see whether the zones' serial moved. */
export const XFR_POLL_MS = 100;

export interface ZoneTransfers {
  service: XfrService;
  /** The zones as transferred (null without keys: nothing is read, every transfer is refused). */
  zones: XfrZones | null;
  close(): void;
}

/**
 * The zone transfers of the `dns` role (docs/dns.md, "Zone transfers"): with `DNS_TSIG_KEYS`, the
 * zones are read in one read transaction whenever the index's progress moves (polled every
 * XFR_POLL_MS, or twice as long as the last read took), the answers' serial is read again at once, and every secondary of `DNS_NOTIFY`
 * is sent a NOTIFY for each zone whose serial changed.
 */
export function startZoneTransfers(
  ctx: Pick<AppContext, "config" | "store" | "ranker" | "clock" | "logger">,
  lookup: Pick<StoreZoneLookup, "reload">,
  nameServers: readonly string[],
  /** The serial every DNS process answers (shared-serial.ts); absent: this process's own. */
  serial?: ZoneSerialSource,
  pollMs = XFR_POLL_MS,
): ZoneTransfers {
  const logger = ctx.logger.child({ component: "dns-xfr" });
  const keys = parseTsigKeys(ctx.config.dnsTsigKeys);
  const targets = parseNotifyTargets(ctx.config.dnsNotify);
  if (keys.length === 0) {
    if (targets.length > 0)
      logger.warn("DNS_NOTIFY is set but DNS_TSIG_KEYS is not: no secondary can transfer");
    return {
      service: createXfrService({ zones: new XfrZones(noZones(ctx)), keys, clock: ctx.clock, logger }),
      zones: null,
      close() {},
    };
  }
  const zones = new XfrZones({
    store: ctx.store,
    ranker: ctx.ranker,
    apex: { nameServers, hostmaster: ctx.config.dnsHostmaster },
    icannTlds: loadIcannTlds(ctx.config),
    clock: ctx.clock,
    serial,
  });
  const notifier: Notifier | null =
    targets.length === 0 ? null : createNotifier({ targets, key: keys[0], clock: ctx.clock, logger });
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const tick = async () => {
    let wait = pollMs;
    try {
      const started = performance.now();
      const changed = await zones.refresh();
      // A large map takes a while to read: the next read waits twice as long, so that reading
      // the zones takes at most a third of the process's time while the chain moves.
      wait = Math.max(pollMs, 2 * (performance.now() - started));
      if (changed.length > 0) {
        // SOA queries (a secondary's refresh) answer the new serial before the NOTIFY goes out.
        await lookup.reload().catch(() => {});
        logger.info({ zones: changed.length, progress: zones.progress() }, "zones read for transfer");
        if (notifier !== null)
          for (const origin of changed) {
            const z = zones.zone(origin);
            if (z !== null) void notifier.notify(z.apex);
          }
      }
    } catch (e) {
      logger.warn({ err: e }, "reading the zones for transfer failed");
    }
    if (!stopped) timer = setTimeout(() => void tick(), wait).unref();
  };
  void tick();
  return {
    service: createXfrService({ zones, keys, clock: ctx.clock, logger }),
    zones,
    close() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      notifier?.close();
    },
  };
}

function noZones(ctx: Pick<AppContext, "store" | "ranker" | "clock">) {
  return {
    store: ctx.store,
    ranker: ctx.ranker,
    apex: { nameServers: [], hostmaster: "" },
    clock: ctx.clock,
  };
}

import type { AppContext } from "../app-context.js";
import { loadIcannTlds } from "../scoring/iana-tlds.js";
import type { StoreTuning } from "../store/create-store.js";
import { createResolution } from "../resolution/resolution.js";
import { AnswerCache } from "./answer-cache.js";
import { loadDnssecKeys } from "./dnssec-keys.js";
import { DnssecSigner } from "./dnssec-sign.js";
import { createDnsServer } from "./dns-server.js";
import { startDotServer } from "./dot-server.js";
import { createStoreZoneLookup, type StoreZoneLookup } from "./store-zone-lookup.js";
import { createSharedSerial, type ZoneSerialSource } from "./shared-serial.js";
import { startZoneTransfers } from "./xfr-role.js";

/** Comma-separated host names of the config, in order. */
/**
 * The store of a process that serves DNS alone (a DNS worker; `OMNINAME_ROLES=dns`): no read
 * cache of domains. The answer cache keeps what is asked again; domains kept for a while outlive
 * V8's young generation, so each computed answer left objects for every scavenge to copy
 * (docs/dns.md, "Latency").
 */
export const DNS_ONLY_STORE: StoreTuning = { sqlite: { cacheEntries: 0 } };

export function nameServersOf(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/**
 * The public zones (no project rules) over the context's store and ranker; `forProject` gives the
 * same zones under a project's settings (the per-project DoH).
 */
export function createPublicZoneLookup(
  ctx: AppContext,
  serial: ZoneSerialSource = createSharedSerial({ store: ctx.store, clock: ctx.clock }),
): StoreZoneLookup {
  const lookup = createStoreZoneLookup({
    // Every process (each DNS worker, each DNS role of a scale-out, the API's DoH) answers the
    // one serial of the store (shared-serial.ts, docs/dns.md "One serial for every process").
    serial,
    resolution: createResolution({ store: ctx.store.domainMap, ranker: ctx.ranker }),
    store: ctx.store,
    nameServers: nameServersOf(ctx.config.dnsNameServers),
    hostmaster: ctx.config.dnsHostmaster,
    clock: ctx.clock,
    // The scoring's list (ICANN_TLDS_FILE, a refreshed DATA_DIR copy, or the shipped one).
    icannTlds: loadIcannTlds(ctx.config),
  });
  // DNSSEC=on: every process (each DNS worker, the API's DoH) reads the same key file.
  if (ctx.config.dnssec) lookup.dnssec = new DnssecSigner(loadDnssecKeys(ctx.config), ctx.clock);
  return lookup;
}

/** The `dns` role of one process: UDP and TCP, and DNS-over-TLS when TLS is configured. */
export interface DnsRole {
  host: string;
  port: number;
  /** The DoT port; null without TLS_CERT_FILE. */
  tlsPort: number | null;
  close(): Promise<void>;
}

/**
 * The `dns` role: the authoritative server on DNS_HOST:DNS_PORT, UDP and TCP, and DoT on
 * DNS_TLS_PORT when TLS_CERT_FILE is set, answering from the live map.
 */
export async function startDnsRole(
  ctx: AppContext,
  /** A DNS worker: the UDP socket its primary bound, inherited at this descriptor (dns-cluster.ts). */
  udpFd?: number,
): Promise<DnsRole> {
  // SOA answers and zone transfers read one serial, the one every process answers.
  const serial = createSharedSerial({ store: ctx.store, clock: ctx.clock });
  const lookup = createPublicZoneLookup(ctx, serial);
  // The first read of the zones (TLDs, serial, the scan for empty non-terminals) happens before
  // the port opens, not on the first query.
  await lookup.findZone(".");
  // Zone transfers and NOTIFY (xfr-role.ts): refused unless DNS_TSIG_KEYS is set. With DNS
  // workers, every worker answers transfers and only one sends NOTIFY (dns-cluster.ts).
  const started = startZoneTransfers(ctx, lookup, nameServersOf(ctx.config.dnsNameServers), serial);
  const opts = {
    lookup,
    host: ctx.config.dnsHost,
    tcpIdleMs: ctx.config.dnsTcpIdleMs,
    tcpMaxClients: ctx.config.dnsTcpMaxClients,
    udpBatch: ctx.config.dnsUdpBatch,
    udpFd,
    logger: ctx.logger.child({ component: "dns" }),
    cache: new AnswerCache({ lookup, clock: ctx.clock }),
    xfr: started.service,
  };
  const server = await createDnsServer({ ...opts, port: ctx.config.dnsPort }).catch((e: unknown) => {
    started.close();
    throw e;
  });
  const dot = await startDotServer(ctx.config, opts).catch(async (e: unknown) => {
    started.close();
    await server.close();
    throw e;
  });
  return {
    host: server.host,
    port: server.port,
    tlsPort: dot?.port ?? null,
    async close() {
      started.close();
      await Promise.all([server.close(), dot?.close()]);
    },
  };
}

/** The banner lines of the dns role, with a query to try. */
export function dnsBannerLine(server: Pick<DnsRole, "host" | "port" | "tlsPort">): string {
  const lines = [
    `DNS (UDP+TCP):  ${server.host}:${server.port}   try: dig @${server.host} -p ${server.port} alice.eth TXT`,
  ];
  if (server.tlsPort !== null)
    lines.push(
      `DNS-over-TLS:   ${server.host}:${server.tlsPort}   try: kdig @${server.host} -p ${server.tlsPort} +tls alice.eth TXT`,
    );
  return lines.join("\n");
}

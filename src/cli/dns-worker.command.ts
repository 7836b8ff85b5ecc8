import cluster from "node:cluster";
import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { DNS_ONLY_STORE, startDnsRole } from "../dns/dns-role.js";
import { type DnsWorkerReady, udpFdOf } from "./dns-cluster.js";
import type { Command } from "./command.js";

/**
 * One process of the dns role when DNS_WORKERS > 1, forked by `omniname start` (dns-cluster.ts)
 * with the same environment: the UDP/TCP (and DoT) server over its own store connections. It
 * stops on SIGTERM from the primary; SIGINT (a Ctrl-C sent to the whole process group) is the
 * primary's to handle, which then stops its workers in order.
 */
export const dnsWorkerCommand: Command = {
  name: "dns-worker",
  summary: "dns-worker: (internal) one process of the dns role, started by `start` when DNS_WORKERS > 1",
  async run(argv) {
    if (process.send === undefined) {
      process.stderr.write("omniname dns-worker is started by omniname start (DNS_WORKERS), not by hand\n");
      return 2;
    }
    const ctx = await createContext(loadConfig(), undefined, DNS_ONLY_STORE);
    const dns = await startDnsRole(ctx, udpFdOf(argv)).catch(async (e: unknown) => {
      await ctx.store.close();
      throw e;
    });
    const ready: DnsWorkerReady = {
      type: "omniname-dns-ready",
      host: dns.host,
      port: dns.port,
      tlsPort: dns.tlsPort,
    };
    process.send(ready);
    process.on("SIGINT", () => {});
    await new Promise<void>((resolve) => process.once("SIGTERM", () => resolve()));
    await dns.close();
    await ctx.store.close();
    // The IPC channel keeps the process alive: let go of it, and the process ends.
    cluster.worker?.disconnect();
    return 0;
  },
};

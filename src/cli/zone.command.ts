import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { nameServersOf } from "../dns/dns-role.js";
import { loadDnssecKeys } from "../dns/dnssec-keys.js";
import { exportZones, ZONE_EXPORT_SQLITE_READS } from "../dns/zone-export.js";
import { createResolution } from "../resolution/resolution.js";
import { type Command, parseArgs } from "./command.js";

const USAGE = "usage: omniname zone export [--project P] [--tld T …] --out DIR\n";

/** Every value of a repeatable option (`--tld a --tld b`, `--tld=a,b`). */
function allValues(argv: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === `--${name}` && i + 1 < argv.length) out.push(argv[++i]);
    else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
  }
  return out
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
}

export const zoneCommand: Command = {
  name: "zone",
  walksMap: true,
  summary: "zone export [--project P] [--tld T …] --out DIR: one RFC 1035 master file per TLD (docs/dns.md)",
  async run(argv) {
    const { positional, options } = parseArgs(argv);
    const out = options.out;
    if (positional[0] !== "export" || typeof out !== "string") {
      process.stderr.write(USAGE);
      return 2;
    }
    const config = loadConfig();
    // One pass over the map in name order: a small read window and read cache (only the rare
    // names looked up live use them), so the RSS stays that of a page (docs/dns.md, "Zone files").
    const ctx = await createContext(config, undefined, { sqlite: { ...ZONE_EXPORT_SQLITE_READS } });
    try {
      let projectSettings: Record<string, unknown> = {};
      if (typeof options.project === "string") {
        const ref = options.project;
        const project = /^\d+$/.test(ref)
          ? await ctx.store.projects.findProjectById(Number(ref))
          : await ctx.store.projects.findProjectByName(ref);
        if (project === null) {
          process.stderr.write(`no project ${JSON.stringify(ref)}\n`);
          return 1;
        }
        projectSettings = project.settings;
      }
      const tlds = allValues(argv, "tld");
      const started = Date.now();
      const result = await exportZones(
        ctx.store,
        createResolution({ store: ctx.store.domainMap, ranker: ctx.ranker }),
        {
          outDir: out,
          tlds: tlds.length > 0 ? tlds : undefined,
          projectSettings,
          nameServers: nameServersOf(config.dnsNameServers),
          hostmaster: config.dnsHostmaster,
          now: ctx.clock(),
          icannTlds: ctx.scoringLists.icannTlds,
          ranker: ctx.ranker,
          dnssec: config.dnssec ? loadDnssecKeys(config) : undefined,
        },
      );
      for (const z of result.zones) process.stdout.write(`${z.file}: ${z.names} names, serial ${z.serial}\n`);
      for (const z of result.icann)
        process.stdout.write(
          `${z.tld}: not exported, a TLD of the ICANN root (${z.domains} ${z.domains === 1 ? "domain" : "domains"} skipped; docs/dns.md)\n`,
        );
      if (config.dnssec)
        process.stdout.write("signed (DNSSEC=true): DNSKEY, RRSIGs and an NSEC chain, valid for 7 days\n");
      process.stdout.write(
        `exported ${result.zones.length} zones in ${Date.now() - started} ms; ${result.skipped} names or records skipped (${out}/skipped.tsv)\n`,
      );
      return 0;
    } finally {
      await ctx.store.close();
    }
  },
};

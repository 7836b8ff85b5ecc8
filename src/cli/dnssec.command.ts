import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Config } from "../config/config.schema.js";
import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { buildDnsName } from "../dns/dns-name.js";
import {
  dnskeyText,
  dnssecKeyPath,
  dsText,
  generateDnssecKeyPem,
  loadDnssecKeys,
  parseDnssecKeys,
  pemKeyBlocks,
} from "../dns/dnssec-keys.js";
import { buildIcannZones } from "../dns/icann-tlds.js";
import { APEX_TTL } from "../dns/zone.js";
import { type Command, parseArgs } from "./command.js";

const USAGE = `usage: omniname dnssec ds [--zone Z …]       DNSKEY and DS records of every zone (a partner's trust anchor)
       omniname dnssec anchors [--zone Z …]  the same as a BIND trust-anchors clause (delv -a, named)
       omniname dnssec add-key                add a key: published, and signing beside the others
       omniname dnssec retire KEYTAG          remove a key (never the last one)
`;

/** Every value of `--zone` (repeated or comma-separated), in DNS form; null when one is not a name. */
function zonesOf(argv: string[]): string[] | null {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = a === "--zone" ? argv[++i] : a.startsWith("--zone=") ? a.slice(7) : undefined;
    if (v === undefined) continue;
    for (const part of v.split(",")) {
      const t = part.trim().replace(/\.$/, "");
      if (t.length === 0) continue;
      const dns = buildDnsName(t);
      if (!dns.ok) return null;
      out.push(dns.name);
    }
  }
  return out;
}

/** The zones omniname serves: every TLD of the map that is not one of the ICANN root. */
async function servedZones(config: Config): Promise<string[]> {
  const ctx = await createContext(config);
  try {
    const icann = buildIcannZones(ctx.scoringLists.icannTlds);
    const zones = new Set<string>();
    for (const { tld } of await ctx.store.scoring.listTldFirstRegistrations()) {
      const dns = buildDnsName(tld);
      if (dns.ok && !icann.has(dns.name)) zones.add(dns.name);
    }
    return [...zones].sort();
  } finally {
    await ctx.store.close();
  }
}

/** Rewrites the key file with these PEM blocks (mode 0600, replaced whole). */
function writeKeys(path: string, pems: string[]): void {
  const aside = `${path}.${process.pid}.tmp`;
  writeFileSync(aside, `${pems.join("\n")}\n`, { mode: 0o600 });
  renameSync(aside, path);
}

/** The index of the key with this tag in the file, or an error line. */
function indexOfTag(config: Config, tag: string | undefined): number | string {
  if (tag === undefined || !/^\d{1,5}$/.test(tag))
    return "a key tag (a number, as `dnssec ds` prints it) is required";
  const keys = loadDnssecKeys(config).keys;
  const i = keys.findIndex((k) => k.keyTag === Number(tag));
  return i < 0
    ? `no key with tag ${tag} in ${dnssecKeyPath(config)} (keys: ${keys.map((k) => k.keyTag).join(", ")})`
    : i;
}

export const dnssecCommand: Command = {
  name: "dnssec",
  summary: "dnssec ds|anchors|add-key|retire: DNSSEC keys and trust anchors (docs/dns.md, DNSSEC)",
  usage: USAGE,
  async run(argv) {
    try {
      return await runDnssec(argv);
    } catch (e) {
      // A key file that cannot be read or parsed: its message, no stack.
      process.stderr.write(`omniname dnssec: ${(e as Error).message}\n`);
      return 1;
    }
  },
};

async function runDnssec(argv: string[]): Promise<number> {
  const { positional } = parseArgs(argv);
  const sub = positional[0];
  const fail = (message: string, code = 1) => {
    process.stderr.write(`${message}\n`);
    return code;
  };
  if (sub !== "ds" && sub !== "anchors" && sub !== "add-key" && sub !== "retire") return fail(USAGE, 2);
  const config = loadConfig();
  if (sub === "ds" || sub === "anchors") {
    const asked = zonesOf(argv);
    if (asked === null) return fail("--zone: not a DNS name");
    const zones = asked.length > 0 ? asked : await servedZones(config);
    if (zones.length === 0) return fail("no zone: the map has no TLD to serve yet (or pass --zone)");
    const keys = loadDnssecKeys(config).keys;
    let out = sub === "ds" ? "" : "trust-anchors {\n";
    for (const zone of zones)
      for (const key of keys)
        out +=
          sub === "ds"
            ? `; ${zone}. key ${key.keyTag}\n${dnskeyText(zone, key, APEX_TTL)}\n${dsText(zone, key, APEX_TTL)}\n`
            : `  ${zone}. static-key 257 3 13 "${key.dnskey.subarray(4).toString("base64")}";\n`;
    process.stdout.write(sub === "ds" ? out : `${out}};\n`);
    return 0;
  }
  // The key file is created if it does not exist yet (the same as the first start with DNSSEC on).
  const path = dnssecKeyPath(config);
  if (!existsSync(path) && config.dnssecKeyFile !== undefined) return fail(`${path}: no such file`);
  loadDnssecKeys(config);
  const pems = pemKeyBlocks(readFileSync(path, "utf8"));
  if (sub === "add-key") {
    const pem = generateDnssecKeyPem();
    const next = [...pems, pem];
    parseDnssecKeys(next.join("\n"), path);
    writeKeys(path, next);
    const key = parseDnssecKeys(pem, "new key").keys[0];
    process.stdout.write(
      `key ${key.keyTag} added to ${path}: restart the dns role, export the zones again\n`,
    );
    return 0;
  }
  const i = indexOfTag(config, positional[1]);
  if (typeof i === "string") return fail(i);
  if (pems.length === 1) return fail("the only key cannot be retired: add a key first (dnssec add-key)");
  writeKeys(
    path,
    pems.filter((_, j) => j !== i),
  );
  process.stdout.write(
    `key ${positional[1]} removed from ${path}: restart the dns role, export the zones again\n`,
  );
  return 0;
}

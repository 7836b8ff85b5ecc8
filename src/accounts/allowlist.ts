import { BlockList, isIP } from "node:net";
import { AppError } from "../domain/errors.js";

const MAX_ALLOWLIST_ENTRIES = 100;

/** `::ffff:192.0.2.1` (an IPv4 client on a dual-stack socket) is the IPv4 address 192.0.2.1. */
function normalizeIp(ip: string): string {
  const s = ip.trim().toLowerCase();
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  return m ? m[1] : s;
}

/** Checks one allowlist entry (an address or a CIDR range) and returns its canonical text. */
export function parseIpRule(rule: string): string {
  const s = rule.trim().toLowerCase();
  const [addr, bits, extra] = s.split("/");
  const ip = normalizeIp(addr ?? "");
  const family = isIP(ip);
  if (extra !== undefined || family === 0)
    throw new AppError("INVALID_PARAMETER", `Not an IP address or CIDR range: ${rule}`);
  if (bits === undefined) return ip;
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max)
    throw new AppError("INVALID_PARAMETER", `Bad prefix length in ${rule}: 0..${max}`);
  return `${ip}/${Number(bits)}`;
}

/** A matcher over canonical rules; `null` for an empty list (no restriction). */
export function compileIpRules(rules: readonly string[]): BlockList | null {
  if (rules.length === 0) return null;
  const list = new BlockList();
  for (const r of rules) {
    const rule = r === "loopback" ? null : parseIpRule(r);
    if (rule === null) {
      list.addSubnet("127.0.0.0", 8, "ipv4");
      list.addAddress("::1", "ipv6");
      continue;
    }
    const [addr, bits] = rule.split("/");
    const type = isIP(addr) === 4 ? "ipv4" : "ipv6";
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return list;
}

export function ipMatches(list: BlockList, ip: string | null): boolean {
  if (ip === null) return false;
  const family = isIP(ip);
  if (family === 0) return false;
  return list.check(ip, family === 4 ? "ipv4" : "ipv6");
}

const DEFAULT_PORT: Record<string, string> = { "http:": "80", "https:": "443" };

/**
 * Canonical form of an allowed-origin entry: `scheme://host[:port]`, lower case, default port
 * dropped. `https://*.example.com` allows every subdomain of example.com (not example.com itself).
 */
export function parseOriginRule(rule: string): string {
  const s = rule.trim();
  const m = /^(https?):\/\/(\*\.)?([^/?#\s]+)$/i.exec(s);
  if (!m || s.length > 255 || m[3].includes("*"))
    throw new AppError("INVALID_PARAMETER", `Not an origin (scheme://host[:port]): ${rule}`);
  let url: URL;
  try {
    url = new URL(`${m[1]}://${m[3]}`);
  } catch {
    throw new AppError("INVALID_PARAMETER", `Not an origin (scheme://host[:port]): ${rule}`);
  }
  if (url.username || url.password || url.pathname !== "/" || url.hostname === "")
    throw new AppError("INVALID_PARAMETER", `Not an origin (scheme://host[:port]): ${rule}`);
  const port = url.port && url.port !== DEFAULT_PORT[url.protocol] ? `:${url.port}` : "";
  return `${url.protocol}//${m[2] ? "*." : ""}${url.hostname}${port}`;
}

/** The canonical form of a request's Origin header, or null when it is not a web origin. */
export function normalizeOrigin(origin: string): string | null {
  if (origin.includes("*")) return null;
  try {
    return parseOriginRule(origin);
  } catch {
    return null;
  }
}

export function originMatches(rules: readonly string[], origin: string): boolean {
  const o = normalizeOrigin(origin);
  if (o === null) return false;
  for (const rule of rules) {
    if (rule === o) return true;
    const star = rule.indexOf("://*.");
    if (star > 0) {
      const scheme = rule.slice(0, star + 3);
      const suffix = rule.slice(star + 4); // ".example.com[:port]"
      if (o.startsWith(scheme) && o.endsWith(suffix) && o.length > scheme.length + suffix.length) return true;
    }
  }
  return false;
}

/**
 * The client's address. Without trusted proxies it is the socket's peer, whatever the headers say.
 * With them, X-Forwarded-For is read from the right, one hop per trusted proxy, and the first
 * address not in the trusted set is the client: entries a client wrote itself sit to the left of
 * what our proxies appended and are never reached. A malformed hop yields null (denied by any
 * IP allowlist) rather than falling back to the proxy's own address.
 */
export function createClientIpResolver(
  trustedProxy: string,
): (socketIp: string | undefined, xff: unknown) => string | null {
  const rules = trustedProxy
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const trusted = compileIpRules(rules);
  return (socketIp, xff) => {
    if (!socketIp) return null;
    let ip = normalizeIp(socketIp);
    if (trusted === null) return ip;
    const header = Array.isArray(xff) ? xff.join(",") : typeof xff === "string" ? xff : "";
    const hops = header
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    while (ipMatches(trusted, ip) && hops.length > 0) {
      const next = normalizeIp(hops.pop()!);
      if (isIP(next) === 0) return null;
      ip = next;
    }
    return ip;
  };
}

/** Validates and canonicalizes the two lists of a project's Security settings. */
export function parseAccessLists(input: {
  allowedIps: readonly string[];
  allowedOrigins: readonly string[];
}): {
  allowedIps: string[];
  allowedOrigins: string[];
} {
  if (input.allowedIps.length > MAX_ALLOWLIST_ENTRIES || input.allowedOrigins.length > MAX_ALLOWLIST_ENTRIES)
    throw new AppError("INVALID_PARAMETER", `At most ${MAX_ALLOWLIST_ENTRIES} entries per list.`);
  return {
    allowedIps: [...new Set(input.allowedIps.map(parseIpRule))],
    allowedOrigins: [...new Set(input.allowedOrigins.map(parseOriginRule))],
  };
}

import { getCoderByCoinType } from "@ensdomains/address-encoder";
import dnsPacket from "dns-packet";
import { mnemonicToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { normalizeEnsName, normalizeName } from "../domain/names.js";
import { PROVIDERS, activePairs } from "../domain/providers.js";
import {
  COLLISION_NAMES,
  fixtureByName,
  fixtureTldOrigins,
  fixturesByName,
  fixturesOf,
} from "./fixture-lookups.js";
import { cidV0, GENESIS_HASH160, p2pkhAddress } from "./fixture-values.js";
import { SNS_NAMES } from "./sns-fixtures.js";
import { fixtureWorld, type FixtureDomain, ICANN_TLDS, NOTABLE, fixtureBaseTime } from "./fixtures.js";

const { domains, owners } = fixtureWorld();
const YEAR = 365 * 86_400_000;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const byProvider = (p: string) => domains.filter((d) => d.provider === p);
const tldOf = (d: FixtureDomain) => d.name.slice(d.name.lastIndexOf(".") + 1);
const rrCodec = (dnsPacket as unknown as { answer: { decode(buf: Buffer, offset?: number): DecodedRr } })
  .answer;
interface DecodedRr {
  type: string;
  name: string;
  ttl: number;
  data: string;
}
const btc = getCoderByCoinType(0);

function decodeRrset(hex: string): DecodedRr[] {
  const buf = Buffer.from(hex.slice(2), "hex");
  const rrs: DecodedRr[] = [];
  for (let off = 0; off < buf.length; off += (rrCodec.decode as unknown as { bytes: number }).bytes) {
    rrs.push(rrCodec.decode(buf, off));
  }
  return rrs;
}

describe("fixture world: shape", () => {
  it("holds at least 200 domains over every active (provider, network) pair and no other", () => {
    expect(domains.length).toBeGreaterThanOrEqual(200);
    for (const { provider, network } of activePairs()) {
      // The Solana Name Service's names are the devnet's Solana world (sns-fixtures.ts), not chain fixtures.
      if (network === "SOLANA") continue;
      expect(fixturesOf(provider, network).length, `${provider}/${network}`).toBeGreaterThanOrEqual(20);
    }
    for (const d of domains) {
      expect(PROVIDERS[d.provider].comingSoon).toBe(false);
      expect(PROVIDERS[d.provider].networks as readonly string[]).toContain(d.network);
    }
  });

  it("keeps each name once per (provider, network)", () => {
    const keys = domains.map((d) => `${d.provider}/${d.network}/${d.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("stores every name in its provider's normalized form", () => {
    for (const d of domains) {
      const n = d.provider === "NAMESPACE_C" ? normalizeEnsName(d.name) : normalizeName(d.name);
      expect(n.ok && n.value.name, d.name).toBe(d.name);
    }
  });

  it("keeps ENS names under .eth, a single second-level label plus at most two subdomain labels", () => {
    const ens = byProvider("NAMESPACE_C");
    for (const d of ens) {
      const labels = d.name.split(".");
      expect(labels.at(-1)).toBe("eth");
      expect(labels.length).toBeGreaterThanOrEqual(2);
      expect(labels.length).toBeLessThanOrEqual(4);
      // A subdomain's parent is registered before it.
      if (labels.length > 2) {
        const parent = fixtureByName(labels.slice(1).join("."), { provider: "NAMESPACE_C" });
        expect(parent, d.name).not.toBeNull();
        expect(parent!.registeredAt).toBeLessThan(d.registeredAt);
      }
    }
    expect(ens.filter((d) => d.name.split(".").length > 2).map((d) => d.name)).toEqual(NOTABLE.ensSubdomains);
  });

  it("lists domains in strictly increasing registration time within the first year", () => {
    const base = fixtureBaseTime();
    domains.forEach((d, i) => {
      expect(d.registeredAt).toBeGreaterThan(i === 0 ? base : domains[i - 1].registeredAt);
      expect(d.registeredAt).toBeLessThan(base + YEAR);
    });
  });

  it("uses anvil's default accounts as the named owners", () => {
    const labels = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"];
    const mnemonic = "test test test test test test test test test test test junk";
    labels.forEach((label, i) => {
      expect(owners[label]).toBe(mnemonicToAccount(mnemonic, { addressIndex: i }).address.toLowerCase());
    });
    const all = Object.values(owners);
    expect(new Set(all).size).toBe(all.length);
    for (const a of all) expect(a).toMatch(ADDRESS);
    for (const d of domains) expect(all).toContain(d.owner);
    expect(new Set(domains.map((d) => d.owner)).size).toBeGreaterThanOrEqual(25);
  });
});

describe("fixture world: native records", () => {
  const FNS_KEY =
    /^(token\.[A-Z0-9]+\.\d+|redirect\.WEBSITE\.\d+|record\.(A|AAAA|TXT|CNAME)\.\d+|profile\.OWNER\.[a-z]+|social\.[A-Z]+\.\d+|content\.[A-Z]+\.\d+)$/;
  const UNS_KEYS = new Set([
    "crypto.ETH.address",
    "crypto.BTC.address",
    "crypto.USDT.version.ERC20.address",
    "browser.redirect_url",
    "dns.A",
    "dns.A.ttl",
    "dns.AAAA",
    "whois.email.value",
    "social.picture.value",
    "social.twitter.username",
    "ipfs.html.value",
  ]);
  const ENS_KEYS = new Set([
    "addr.60",
    "addr.0",
    "text.url",
    "text.name",
    "text.avatar",
    "text.email",
    "text.description",
    "text.com.twitter",
    "text.com.github",
    "contenthash",
    "dns.A",
  ]);
  const allRecords = (d: FixtureDomain) => [...d.records, ...(d.history?.resetRecordsBefore ?? [])];

  it("writes FNS keys in the canonical form, indices counting from 0 without gaps", () => {
    for (const d of byProvider("NAMESPACE_A")) {
      const keys = d.records.map(([k]) => k);
      expect(new Set(keys).size, d.name).toBe(keys.length);
      for (const [k, v] of allRecords(d)) {
        expect(k, d.name).toMatch(FNS_KEY);
        expect(v.length).toBeGreaterThan(0);
        const m = /^(.*)\.(\d+)$/.exec(k);
        if (m && Number(m[2]) > 0) expect(keys, `${d.name} ${k}`).toContain(`${m[1]}.${Number(m[2]) - 1}`);
      }
    }
  });

  it("holds multi-valued FNS records of every canonical key form", () => {
    const keys = new Set(byProvider("NAMESPACE_A").flatMap((d) => d.records.map(([k]) => k)));
    for (const k of [
      "token.ETH.1",
      "token.BTC.1",
      "redirect.WEBSITE.1",
      "record.A.1",
      "record.AAAA.1",
      "record.TXT.1",
      "record.CNAME.0",
      "social.TWITTER.1",
      "content.IPFS.1",
    ]) {
      expect(keys, k).toContain(k);
    }
    const rich = fixtureByName(NOTABLE.richFns, { provider: "NAMESPACE_A" })!;
    expect(rich.records.filter(([k]) => k.startsWith("profile.OWNER.")).length).toBeGreaterThanOrEqual(3);
  });

  it("writes UNS keys of the UNS conventions with well-formed values", () => {
    for (const d of byProvider("NAMESPACE_B")) {
      for (const [k, v] of allRecords(d)) {
        expect(UNS_KEYS, `${d.name} ${k}`).toContain(k);
        if (k === "crypto.ETH.address") expect(v).toMatch(ADDRESS);
        if (k === "crypto.BTC.address") expect(btc.decode(v).length).toBe(25);
        if (k === "dns.A") {
          const ips = JSON.parse(v) as unknown;
          expect(Array.isArray(ips) && ips.length > 0).toBe(true);
          for (const ip of ips as string[]) expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
        }
        if (k === "dns.AAAA")
          expect(JSON.parse(v)).toEqual(expect.arrayContaining([expect.stringContaining(":")]));
        if (k === "ipfs.html.value") expect(v).toMatch(/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/);
      }
    }
    const multiA = byProvider("NAMESPACE_B").some((d) =>
      d.records.some(([k, v]) => k === "dns.A" && (JSON.parse(v) as string[]).length > 1),
    );
    expect(multiA).toBe(true);
  });

  it("writes ENS records as resolver data: addresses, scriptPubkeys, contenthash and DNS wire format", () => {
    for (const d of byProvider("NAMESPACE_C")) {
      const ascii = (normalizeEnsName(d.name) as { ok: true; value: { ascii: string } }).value.ascii;
      for (const [k, v] of allRecords(d)) {
        expect(ENS_KEYS, `${d.name} ${k}`).toContain(k);
        if (k === "addr.60") expect(v).toMatch(ADDRESS);
        if (k === "addr.0") {
          expect(v).toMatch(/^0x76a914[0-9a-f]{40}88ac$/);
          // The scriptPubkey must round-trip through the ENSIP-9 coder the adapter uses.
          const bytes = Buffer.from(v.slice(2), "hex");
          expect(Buffer.from(btc.decode(btc.encode(bytes))).toString("hex")).toBe(v.slice(2));
        }
        if (k === "contenthash") expect(v).toMatch(/^0xe30101701220[0-9a-f]{64}$/);
        if (k === "dns.A") {
          const rrs = decodeRrset(v);
          expect(rrs.length).toBeGreaterThan(0);
          for (const rr of rrs) expect(rr).toMatchObject({ type: "A", name: ascii, ttl: 3600 });
        }
      }
    }
    const alice = fixtureByName("alice.eth")!;
    const addr0 = alice.records.find(([k]) => k === "addr.0")![1];
    expect(addr0).toBe(`0x${Buffer.from(btc.decode("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa")).toString("hex")}`);
    const aliceA = alice.records.find(([k]) => k === "dns.A")![1];
    expect(decodeRrset(aliceA).map((rr) => rr.data)).toEqual(["192.0.2.10", "192.0.2.11"]);
  });

  it("derives BTC addresses and CIDs in their real encodings", () => {
    expect(p2pkhAddress(GENESIS_HASH160)).toBe("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa");
    expect(cidV0("x")).toMatch(/^Qm[1-9A-HJ-NP-Za-km-z]{44}$/);
  });

  it("has long record values in every provider", () => {
    for (const p of ["NAMESPACE_A", "NAMESPACE_B", "NAMESPACE_C"]) {
      const longest = Math.max(...byProvider(p).flatMap((d) => d.records.map(([, v]) => v.length)));
      expect(longest, p).toBeGreaterThanOrEqual(800);
    }
    for (const n of NOTABLE.longValues) expect(fixturesByName(n)).toHaveLength(1);
  });
});

describe("fixture world: collisions and TLDs", () => {
  it("has the same name in two providers and in two networks", () => {
    const alice = fixturesByName(NOTABLE.crossProvider).map((d) => d.provider);
    expect(new Set(alice)).toEqual(new Set(["NAMESPACE_A", "NAMESPACE_B"]));
    const bob = fixturesByName(NOTABLE.crossNetwork).map((d) => `${d.provider}/${d.network}`);
    expect(bob.sort()).toEqual([
      "NAMESPACE_A/BSC",
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_B/ETHEREUM",
      "NAMESPACE_B/POLYGON",
    ]);
  });

  it("lists exactly the names held more than once as collisions", () => {
    const counts = new Map<string, number>();
    for (const d of domains) counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
    expect([...COLLISION_NAMES]).toEqual(
      [...counts]
        .filter(([, c]) => c > 1)
        .map(([n]) => n)
        .sort(),
    );
    for (const n of [NOTABLE.crossProvider, NOTABLE.crossNetwork, NOTABLE.unicode])
      expect(COLLISION_NAMES).toContain(n);
    expect(COLLISION_NAMES.length).toBeGreaterThanOrEqual(5);
  });

  it("has TLDs sold by two providers whose origin is the first registration", () => {
    const origins = fixtureTldOrigins();
    for (const [tld, origin] of Object.entries(NOTABLE.sharedTlds)) {
      const providers = new Set(domains.filter((d) => tldOf(d) === tld).map((d) => d.provider));
      expect(providers.size, tld).toBeGreaterThanOrEqual(2);
      expect(origins.get(tld), tld).toBe(origin);
    }
  });

  it("has FNS .sol names that the devnet's Solana Name Service world holds too", () => {
    expect(NOTABLE.snsCollisions.length).toBeGreaterThan(0);
    for (const n of NOTABLE.snsCollisions) {
      expect(SNS_NAMES as readonly string[]).toContain(n);
      expect(fixturesByName(n).map((d) => d.provider)).toEqual(["NAMESPACE_A"]);
    }
  });

  it("has names under ICANN TLDs", () => {
    for (const tld of ICANN_TLDS)
      expect(
        domains.some((d) => tldOf(d) === tld),
        tld,
      ).toBe(true);
    for (const n of NOTABLE.icann) expect(fixturesByName(n)).toHaveLength(1);
  });
});

describe("fixture world: scripts, emoji and lookalikes", () => {
  it("has Unicode names in Latin, Cyrillic, CJK and emoji whose ASCII form is punycode", () => {
    const has = (re: RegExp) => domains.some((d) => re.test(d.name));
    expect(has(/^\p{Script=Cyrillic}+\./u)).toBe(true);
    expect(has(/\p{Script=Han}/u)).toBe(true);
    expect(byProvider("NAMESPACE_C").some((d) => /\p{Script=Han}/u.test(d.name))).toBe(true);
    expect(has(/\p{Extended_Pictographic}/u)).toBe(true);
    for (const n of [
      NOTABLE.unicode,
      NOTABLE.cyrillic,
      NOTABLE.cjk,
      NOTABLE.cjkEns,
      NOTABLE.emoji,
      NOTABLE.emojiEns,
      NOTABLE.emojiZwjEns,
      ...NOTABLE.punycode,
    ]) {
      const found = fixturesByName(n);
      expect(found.length, n).toBeGreaterThan(0);
      const norm = normalizeName(found[0].name);
      expect(norm.ok && norm.value.ascii.includes("xn--"), n).toBe(true);
    }
    expect(fixtureByName(NOTABLE.unicodeAscii)?.name).toBe(NOTABLE.unicode);
  });

  it("has a Cyrillic lookalike that differs from the name it imitates and fails ENSIP-15", () => {
    const fake = fixtureByName(NOTABLE.confusable)!;
    const real = fixtureByName(NOTABLE.imitated)!;
    expect(fake.name).not.toBe(real.name);
    expect(fake.name.replace(/\u0430/g, "a")).toBe(real.name);
    expect(fake.owner).toBe(owners.mallory);
    expect(normalizeEnsName(fake.name).ok).toBe(false);
  });
});

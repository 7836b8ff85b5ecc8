import { createHash } from "node:crypto";
import dnsPacket from "dns-packet";
import { normalizeEnsName, normalizeName } from "../domain/names.js";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";

/**
 * The one demo and test world (CONVENTIONS "Tests"): the devnet seeder writes it on chain, and the
 * tests read it to know what the crawler must find. Deterministic: a seeded PRNG, a fixed epoch.
 */
export interface FixtureDomain {
  provider: Provider;
  network: Network;
  /** Normalized Unicode full name (normalizeName, or normalizeEnsName for NAMESPACE_C). */
  name: string;
  /** Lower-case 0x address: the owner after `history`. */
  owner: string;
  /** NATIVE keys and values, as the provider stores them on chain (docs/records.md maps them). */
  records: Array<[nativeKey: string, nativeValue: string]>;
  /** Epoch ms; the world lists domains in registration order. */
  registeredAt: number;
  expiresAt: number | null;
  /** The owner sets this name as its reverse (primary) record. */
  reverse: boolean;
  history?: { previousOwners?: string[]; resetRecordsBefore?: Array<[string, string]> };
}

export interface FixtureWorld {
  domains: FixtureDomain[];
  /** label → lower-case address */
  owners: Record<string, string>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;
// 2024-01-01T00:00:00Z. Every registration falls within the following ~200 days, so at
// base + 1 year the expired names are past ENS's 90-day grace period and the others are far from expiry.
const BASE_TIME = Date.UTC(2024, 0, 1);

/** The fixed epoch that `registeredAt` counts from. */
export function fixtureBaseTime(): number {
  return BASE_TIME;
}

// anvil's default accounts 0–9 (mnemonic "test test … junk"), lower case.
const ANVIL_ACCOUNTS = [
  "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
  "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
  "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
  "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
  "0x976ea74026e726554db657fa54763abd0c3a0aa9",
  "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
  "0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f",
  "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
] as const;
const ANVIL_LABELS = [
  "alice",
  "bob",
  "carol",
  "dave",
  "erin",
  "frank",
  "grace",
  "heidi",
  "ivan",
  "judy",
] as const;
const HOLDERS = 24;

const A: Provider = "NAMESPACE_A"; // FNS
const B: Provider = "NAMESPACE_B"; // UNS
const C: Provider = "NAMESPACE_C"; // ENS

// ---------------------------------------------------------------------------------------------
// Deterministic value generators.

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** mulberry32: small, fast, and the same sequence on every platform for a given seed. */
function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

function base58(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString("hex") || "0"}`);
  let out = "";
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

function generatedAddress(seed: string): string {
  return `0x${sha256(`omniname-fixture-owner:${seed}`).subarray(0, 20).toString("hex")}`;
}

/** hash160 of the Bitcoin genesis coinbase key: the P2PKH address 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa. */
export const GENESIS_HASH160 = "62e907b15cbf27d5425399ebf6f0fb50ebb88f18";

function hash160(seed: string): string {
  return sha256(`omniname-fixture-btc:${seed}`).subarray(0, 20).toString("hex");
}

/** Base58Check P2PKH address of a 20-byte hash (version byte 0x00). */
export function p2pkhAddress(h160: string): string {
  const payload = Buffer.concat([Buffer.from([0]), Buffer.from(h160, "hex")]);
  const check = createHash("sha256").update(createHash("sha256").update(payload).digest()).digest();
  return base58(Buffer.concat([payload, check.subarray(0, 4)]));
}

/** The ENS `addr(0)` value: the P2PKH scriptPubkey OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG. */
function p2pkhScript(h160: string): string {
  return `0x76a914${h160}88ac`;
}

/** sha2-256 multihash of a seed: the same content as a CIDv0 (FNS, UNS) and an ENS contenthash. */
function multihash(seed: string): Buffer {
  return Buffer.concat([Buffer.from([0x12, 0x20]), sha256(`omniname-fixture-ipfs:${seed}`)]);
}

export function cidV0(seed: string): string {
  return base58(multihash(seed));
}

/** ENSIP-7 contenthash: ipfs-ns (0xe3 0x01), CIDv1 (0x01), dag-pb (0x70), then the multihash. */
function ensContenthash(seed: string): string {
  return `0xe3010170${multihash(seed).toString("hex")}`;
}

// dns-packet encodes a single resource record with `answer.encode`; its type definitions omit it.
const rrCodec = (dnsPacket as unknown as { answer: { encode(rr: object): Buffer } }).answer;

/** ENS `setDNSRecords` input: the RRset in wire format, one A record per address, TTL 3600. */
function ensDnsARecords(asciiName: string, addresses: string[]): string {
  const rrs = addresses.map((data) =>
    rrCodec.encode({ type: "A", class: "IN", name: asciiName, ttl: 3600, data }),
  );
  return `0x${Buffer.concat(rrs).toString("hex")}`;
}

// ---------------------------------------------------------------------------------------------
// A profile says what a domain holds; one encoder per protocol writes it as native records.

interface Profile {
  eth?: string[];
  /** hash160 values; FNS/UNS store the P2PKH address, ENS the scriptPubkey. */
  btc?: string[];
  usdt?: string;
  website?: string[];
  a?: string[];
  aaaa?: string[];
  txt?: string[];
  cname?: string;
  fullname?: string;
  email?: string;
  avatar?: string;
  description?: string;
  twitter?: string[];
  github?: string;
  /** IPFS content seeds (see cidV0). */
  ipfs?: string[];
}

type Rec = [string, string];
const PROFILE_FIELDS = ["fullname", "email", "avatar", "description"] as const;

// FNS native keys are the canonical keys themselves.
function fnsRecords(p: Profile): Rec[] {
  const r: Rec[] = [];
  const many = (form: string, values: string[] | undefined) => {
    for (const [i, v] of (values ?? []).entries()) r.push([`${form}.${i}`, v]);
  };
  many("token.ETH", p.eth);
  many("token.BTC", p.btc?.map(p2pkhAddress));
  if (p.usdt) r.push(["token.USDT.0", p.usdt]);
  many("redirect.WEBSITE", p.website);
  many("record.A", p.a);
  many("record.AAAA", p.aaaa);
  many("record.TXT", p.txt);
  if (p.cname) r.push(["record.CNAME.0", p.cname]);
  for (const f of PROFILE_FIELDS) if (p[f] !== undefined) r.push([`profile.OWNER.${f}`, p[f]]);
  many("social.TWITTER", p.twitter);
  if (p.github) r.push(["social.GITHUB.0", p.github]);
  many("content.IPFS", p.ipfs?.map(cidV0));
  return r;
}

// UNS holds one value per key, except dns.<TYPE>, a JSON array. Fields UNS has no key for are dropped.
function unsRecords(p: Profile): Rec[] {
  const r: Rec[] = [];
  if (p.eth?.[0]) r.push(["crypto.ETH.address", p.eth[0]]);
  if (p.btc?.[0]) r.push(["crypto.BTC.address", p2pkhAddress(p.btc[0])]);
  if (p.usdt) r.push(["crypto.USDT.version.ERC20.address", p.usdt]);
  if (p.website?.[0]) r.push(["browser.redirect_url", p.website[0]]);
  if (p.a?.length) r.push(["dns.A", JSON.stringify(p.a)], ["dns.A.ttl", "3600"]);
  if (p.aaaa?.length) r.push(["dns.AAAA", JSON.stringify(p.aaaa)]);
  if (p.email) r.push(["whois.email.value", p.email]);
  if (p.avatar) r.push(["social.picture.value", p.avatar]);
  if (p.twitter?.[0]) r.push(["social.twitter.username", p.twitter[0]]);
  if (p.ipfs?.[0]) r.push(["ipfs.html.value", cidV0(p.ipfs[0])]);
  return r;
}

// ENS: addr(coinType), text(key), contenthash and DNS records, each one value.
function ensRecords(asciiName: string, p: Profile): Rec[] {
  const r: Rec[] = [];
  if (p.eth?.[0]) r.push(["addr.60", p.eth[0]]);
  if (p.btc?.[0]) r.push(["addr.0", p2pkhScript(p.btc[0])]);
  if (p.website?.[0]) r.push(["text.url", p.website[0]]);
  if (p.fullname) r.push(["text.name", p.fullname]);
  if (p.avatar) r.push(["text.avatar", p.avatar]);
  if (p.email) r.push(["text.email", p.email]);
  if (p.description) r.push(["text.description", p.description]);
  if (p.twitter?.[0]) r.push(["text.com.twitter", p.twitter[0]]);
  if (p.github) r.push(["text.com.github", p.github]);
  if (p.ipfs?.[0]) r.push(["contenthash", ensContenthash(p.ipfs[0])]);
  if (p.a?.length) r.push(["dns.A", ensDnsARecords(asciiName, p.a)]);
  return r;
}

// ---------------------------------------------------------------------------------------------
// The world.

interface Draft {
  provider: Provider;
  network: Network;
  name: string;
  owner: string;
  profile: Profile;
  reverse?: boolean;
  expired?: boolean;
  expires?: boolean;
  previousOwners?: string[];
  resetBefore?: Profile;
}

const LONG_TEXT = Array.from(
  { length: 24 },
  (_, i) => `Paragraph ${i + 1}: omniname keeps one map of every Web3 domain and its records.`,
).join(" ");

/** Names the tests single out; every one is in the world. */
export const NOTABLE = {
  richFns: "alice.wallet",
  crossProvider: "alice.wallet",
  crossNetwork: "bob.x",
  unicode: "café.wallet",
  unicodeAscii: "xn--caf-dma.wallet",
  cyrillic: "привет.web3",
  cjk: "域名.wallet",
  cjkEns: "名前.eth",
  punycode: ["münchen.wallet", "straße.x"],
  emoji: "🚀.x",
  emojiEns: "🚀.eth",
  emojiZwjEns: "🏳\u200d🌈.eth",
  icann: ["acme.com", "example.org", "shop.com"],
  expired: ["lapsed.crypto", "lapsed.eth"],
  transferred: ["traded.nft", "moved.wallet", "sold.eth"],
  reset: ["fresh.wallet", "reset.crypto", "wiped.eth"],
  confusable: "\u0430lice.wallet",
  imitated: "alice.wallet",
  longValues: ["longtext.wallet", "verbose.crypto", "essay.eth"],
  longLabel: "the-quick-brown-fox-jumps-over-the-lazy-dog-again-and-again-ok.wallet",
  ensSubdomains: ["pay.alice.eth", "docs.bob.eth"],
  /** TLDs sold by two providers, with the provider whose registration came first. */
  sharedTlds: { x: B, wallet: A } as Record<string, Provider>,
} as const;

/** TLDs of the world that also exist in the ICANN root. */
export const ICANN_TLDS: readonly string[] = ["com", "org"];

function storyDrafts(o: Record<string, string>): Draft[] {
  const web = (label: string) => `https://${label}.example.com`;
  const simple = (label: string, owner: string, extra: Profile = {}): Profile => ({
    eth: [owner],
    website: [web(label)],
    twitter: [label],
    ...extra,
  });
  const rich: Profile = {
    eth: [o.alice, o.carol],
    btc: [GENESIS_HASH160, hash160("alice-cold")],
    usdt: o.alice,
    website: ["https://alice.example.com", "https://blog.alice.example.org"],
    a: ["192.0.2.10", "192.0.2.11"],
    aaaa: ["2001:db8::10", "2001:db8::11"],
    txt: ["v=spf1 -all", "https://alice.example.com/verify"],
    cname: "alice.example.net",
    fullname: "Alice Liddell",
    email: "alice@example.com",
    avatar: "https://alice.example.com/avatar.png",
    description: "Alice's wallet: payments, profile and site.",
    twitter: ["alice", "alice_web3"],
    github: "alice",
    ipfs: ["alice-site", "alice-archive"],
  };
  const d = (
    provider: Provider,
    network: Network,
    name: string,
    owner: string,
    profile: Profile,
    extra: Partial<Draft> = {},
  ): Draft => ({
    provider,
    network,
    name,
    owner,
    profile,
    ...extra,
  });
  return [
    d(A, "POLYGON", "alice.wallet", o.alice, rich, { reverse: true }),
    d(B, "ETHEREUM", "bob.x", o.bob, simple("bob", o.bob, { btc: [hash160("bob")], a: ["198.51.100.7"] }), {
      reverse: true,
    }),
    d(A, "POLYGON", "acme.com", o.erin, simple("acme", o.erin, { a: ["203.0.113.5"] })),
    d(
      C,
      "ETHEREUM",
      "alice.eth",
      o.alice,
      { ...rich, eth: [o.alice], avatar: "eip155:1/erc721:0xb47e3cd837ddf8e4c57f05d70ab865de6e193bbb/1" },
      { reverse: true },
    ),
    d(B, "POLYGON", "bob.x", o.carol, simple("bob-polygon", o.carol)),
    d(
      B,
      "ETHEREUM",
      "alice.wallet",
      o.frank,
      simple("alice-uns", o.frank, {
        email: "frank@example.org",
        a: ["198.51.100.20", "198.51.100.21"],
        aaaa: ["2001:db8::20"],
      }),
    ),
    d(A, "POLYGON", "bob.x", o.bob, simple("bob", o.bob, { ipfs: ["bob-site"] })),
    d(A, "BSC", "bob.x", o.dave, simple("bob-bsc", o.dave)),
    d(C, "ETHEREUM", "bob.eth", o.bob, simple("bob", o.bob, { github: "bob", a: ["198.51.100.7"] }), {
      reverse: true,
    }),
    d(A, "AURORA", "carol.web3", o.carol, simple("carol", o.carol, { fullname: "Carol Danvers" }), {
      reverse: true,
    }),
    d(A, "BSC", "example.org", o.frank, simple("example", o.frank, { txt: ["hello from example.org"] })),
    d(A, "POLYGON", "café.wallet", o.grace, simple("cafe", o.grace, { fullname: "Café de Flore" })),
    d(B, "POLYGON", "café.wallet", o.heidi, simple("cafe-uns", o.heidi)),
    d(A, "BSC", "привет.web3", o.ivan, simple("privet", o.ivan)),
    d(A, "AURORA", "域名.wallet", o.judy, simple("yuming", o.judy)),
    d(C, "ETHEREUM", "名前.eth", o.judy, simple("namae", o.judy)),
    d(A, "POLYGON", "münchen.wallet", o.dave, simple("muenchen", o.dave)),
    d(A, "BSC", "straße.x", o.erin, simple("strasse", o.erin)),
    d(A, "POLYGON", "🚀.x", o.frank, simple("rocket", o.frank)),
    d(C, "ETHEREUM", "🚀.eth", o.grace, simple("rocket", o.grace)),
    d(C, "ETHEREUM", "🏳️‍🌈.eth", o.heidi, simple("rainbow", o.heidi)),
    d(B, "ETHEREUM", "lapsed.crypto", o.ivan, simple("lapsed", o.ivan), { expired: true }),
    d(C, "ETHEREUM", "lapsed.eth", o.judy, simple("lapsed", o.judy), { expired: true }),
    d(B, "ETHEREUM", "traded.nft", o.erin, simple("traded", o.erin), { previousOwners: [o.carol, o.dave] }),
    d(A, "BSC", "moved.wallet", o.grace, simple("moved", o.grace), { previousOwners: [o.frank] }),
    d(C, "ETHEREUM", "sold.eth", o.carol, simple("sold", o.carol), { previousOwners: [o.bob] }),
    d(A, "POLYGON", "fresh.wallet", o.alice, simple("fresh", o.alice), {
      resetBefore: { eth: [o.bob], txt: ["stale verification"], twitter: ["old_handle"] },
    }),
    d(B, "POLYGON", "reset.crypto", o.bob, simple("reset", o.bob), {
      resetBefore: { eth: [o.carol], email: "old@example.com", a: ["192.0.2.99"] },
    }),
    d(C, "ETHEREUM", "wiped.eth", o.dave, simple("wiped", o.dave), {
      resetBefore: { eth: [o.erin], description: "records from before the reset" },
    }),
    d(A, "POLYGON", "\u0430lice.wallet", o.mallory, simple("alice-wallet-support", o.mallory)),
    d(
      A,
      "POLYGON",
      "longtext.wallet",
      o.heidi,
      simple("longtext", o.heidi, { txt: [LONG_TEXT], description: LONG_TEXT }),
    ),
    d(
      B,
      "ETHEREUM",
      "verbose.crypto",
      o.ivan,
      simple("verbose", o.ivan, { website: [`https://verbose.example.com/${"segment/".repeat(100)}end`] }),
    ),
    d(
      C,
      "ETHEREUM",
      "essay.eth",
      o.erin,
      simple("essay", o.erin, { description: `${LONG_TEXT} ${LONG_TEXT}` }),
    ),
    d(C, "ETHEREUM", "pay.alice.eth", o.alice, simple("pay-alice", o.alice)),
    d(C, "ETHEREUM", "docs.bob.eth", o.dave, simple("docs-bob", o.dave)),
    d(B, "ETHEREUM", "carol.crypto", o.carol, simple("carol", o.carol, { usdt: o.carol }), { reverse: true }),
    d(B, "POLYGON", "dave.nft", o.dave, simple("dave", o.dave), { reverse: true }),
    d(A, "BSC", "dave.web3", o.dave, simple("dave", o.dave), { reverse: true }),
    d(A, "AURORA", "shop.com", o.grace, simple("shop", o.grace, { cname: "shops.example.net" })),
    d(A, "POLYGON", NOTABLE.longLabel, o.judy, simple("long-label", o.judy)),
    d(A, "AURORA", "moon.wallet", o.holder01, simple("moon", o.holder01)),
    d(B, "POLYGON", "moon.wallet", o.holder02, simple("moon-uns", o.holder02)),
    d(B, "ETHEREUM", "nova.x", o.grace, simple("nova", o.grace)),
    d(A, "BSC", "nova.x", o.heidi, simple("nova-fns", o.heidi)),
  ];
}

const WORDS = [
  "moon",
  "sun",
  "star",
  "pixel",
  "block",
  "chain",
  "nova",
  "atlas",
  "delta",
  "ember",
  "frost",
  "gale",
  "harbor",
  "iris",
  "jade",
  "kite",
  "lumen",
  "maple",
  "nimbus",
  "onyx",
  "pearl",
  "quartz",
  "raven",
  "sage",
  "tide",
  "umber",
  "vale",
  "willow",
  "zephyr",
  "cobalt",
];
const BULK: Array<{ provider: Provider; network: Network; count: number; tlds: string[] }> = [
  { provider: A, network: "POLYGON", count: 36, tlds: ["wallet", "web3", "metaverse", "x"] },
  { provider: A, network: "BSC", count: 30, tlds: ["wallet", "web3", "bnb", "x"] },
  { provider: A, network: "AURORA", count: 26, tlds: ["wallet", "aurora", "web3"] },
  { provider: B, network: "ETHEREUM", count: 32, tlds: ["crypto", "nft", "x", "wallet", "dao"] },
  { provider: B, network: "POLYGON", count: 32, tlds: ["crypto", "nft", "x", "wallet", "blockchain"] },
  { provider: C, network: "ETHEREUM", count: 30, tlds: ["eth"] },
];

function bulkDrafts(o: Record<string, string>, taken: Set<string>, rng: () => number): Draft[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
  const holders = Object.keys(o).filter((k) => k.startsWith("holder"));
  const queue = BULK.flatMap((b) => Array.from({ length: b.count }, () => b));
  // Shuffle so that the pairs interleave in registration order.
  for (let i = queue.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [queue[i], queue[j]] = [queue[j], queue[i]];
  }
  const reverseTaken = new Set<string>();
  const out: Draft[] = [];
  for (const b of queue) {
    let name: string;
    do {
      const sld = rng() < 0.5 ? `${pick(WORDS)}${pick(WORDS)}` : `${pick(WORDS)}-${Math.floor(rng() * 1000)}`;
      name = `${sld}.${pick(b.tlds)}`;
    } while (taken.has(`${b.provider}/${b.network}/${name}`));
    taken.add(`${b.provider}/${b.network}/${name}`);
    const ownerLabel = rng() < 0.35 ? pick(ANVIL_LABELS) : pick(holders);
    const owner = o[ownerLabel];
    const sld = name.slice(0, name.lastIndexOf("."));
    const profile: Profile = { eth: [owner] };
    if (rng() < 0.6) profile.website = [`https://${sld}.example.com`];
    if (rng() < 0.4)
      profile.a =
        rng() < 0.3
          ? ["203.0.113.1", `203.0.113.${2 + Math.floor(rng() * 250)}`]
          : [`203.0.113.${2 + Math.floor(rng() * 250)}`];
    if (rng() < 0.3) profile.btc = [hash160(name)];
    if (rng() < 0.3) profile.twitter = [sld.replace(/-/g, "_")];
    if (rng() < 0.25) profile.ipfs = [name];
    if (rng() < 0.2) profile.email = `${sld}@example.org`;
    // Only generated holders set a reverse record in bulk, at most one per (owner, provider, network).
    const rkey = `${owner}/${b.provider}/${b.network}`;
    const reverse = ownerLabel.startsWith("holder") && !reverseTaken.has(rkey) && rng() < 0.3;
    if (reverse) reverseTaken.add(rkey);
    out.push({
      provider: b.provider,
      network: b.network,
      name,
      owner,
      profile,
      reverse,
      expires: b.provider === B && rng() < 0.2,
    });
  }
  return out;
}

/** Builds the world from scratch; FIXTURE_WORLD is its one instance. */
export function buildFixtureWorld(): FixtureWorld {
  const owners: Record<string, string> = {};
  ANVIL_LABELS.forEach((label, i) => {
    owners[label] = ANVIL_ACCOUNTS[i];
  });
  owners.mallory = generatedAddress("mallory");
  for (let i = 1; i <= HOLDERS; i++)
    owners[`holder${String(i).padStart(2, "0")}`] = generatedAddress(`holder${i}`);

  const rng = createRng(0x0a11ce);
  const story = storyDrafts(owners);
  const taken = new Set(story.map((s) => `${s.provider}/${s.network}/${s.name.normalize("NFC")}`));
  const drafts = [...story, ...bulkDrafts(owners, taken, rng)];

  const domains = drafts.map((draft, i): FixtureDomain => {
    const n = draft.provider === C ? normalizeEnsName(draft.name) : normalizeName(draft.name);
    if (!n.ok) throw new Error(`fixture name ${draft.name} is not normalized: ${n.reason}`);
    const registeredAt = BASE_TIME + (i + 1) * 20 * HOUR + Math.floor(rng() * 60) * 60_000;
    const encode = (p: Profile): Rec[] =>
      draft.provider === A
        ? fnsRecords(p)
        : draft.provider === B
          ? unsRecords(p)
          : ensRecords(n.value.ascii, p);
    const isEnsSecondLevel = draft.provider === C && n.value.labels.length === 2;
    let expiresAt: number | null = null;
    if (draft.expired) expiresAt = registeredAt + 90 * DAY;
    else if (isEnsSecondLevel || draft.expires)
      expiresAt = registeredAt + 10 * YEAR + Math.floor(rng() * 365) * DAY;
    const domain: FixtureDomain = {
      provider: draft.provider,
      network: draft.network,
      name: n.value.name,
      owner: draft.owner,
      records: encode(draft.profile),
      registeredAt,
      expiresAt,
      reverse: draft.reverse ?? false,
    };
    if (draft.previousOwners || draft.resetBefore) {
      domain.history = {};
      if (draft.previousOwners) domain.history.previousOwners = [...draft.previousOwners];
      if (draft.resetBefore) domain.history.resetRecordsBefore = encode(draft.resetBefore);
    }
    return domain;
  });
  return { domains, owners };
}

export const FIXTURE_WORLD: FixtureWorld = buildFixtureWorld();

// ---------------------------------------------------------------------------------------------
// Look-ups for tests and the seeder.

function normalizeAny(input: string): string | null {
  const n = normalizeName(input);
  if (n.ok) return n.value.name;
  const e = normalizeEnsName(input);
  return e.ok ? e.value.name : null;
}

/** Every domain of that name across providers and networks, in registration order. */
export function fixturesByName(input: string): FixtureDomain[] {
  const name = normalizeAny(input);
  return name === null ? [] : FIXTURE_WORLD.domains.filter((d) => d.name === name);
}

/** The first registered domain of that name (narrowed by provider/network when given), or null. */
export function fixtureByName(
  input: string,
  filter: { provider?: Provider; network?: Network } = {},
): FixtureDomain | null {
  return (
    fixturesByName(input).find(
      (d) =>
        (filter.provider === undefined || d.provider === filter.provider) &&
        (filter.network === undefined || d.network === filter.network),
    ) ?? null
  );
}

export function fixturesOf(provider: Provider, network: Network): FixtureDomain[] {
  return FIXTURE_WORLD.domains.filter((d) => d.provider === provider && d.network === network);
}

/** Names held by more than one (provider, network): the collisions, sorted. */
export const COLLISION_NAMES: readonly string[] = (() => {
  const counts = new Map<string, number>();
  for (const d of FIXTURE_WORLD.domains) counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
  return [...counts]
    .filter(([, c]) => c > 1)
    .map(([n]) => n)
    .sort();
})();

/** Every owner in order, ending with the current one: the mint goes to the first. */
export function ownerHistory(d: FixtureDomain): string[] {
  return [...(d.history?.previousOwners ?? []), d.owner];
}

/** The owner the crawler must end with after replaying the history: always the last transfer's target. */
export function expectedOwner(d: FixtureDomain): string {
  const chain = ownerHistory(d);
  return chain[chain.length - 1];
}

/** TLD → the provider that registered a name under it first (docs/scoring.md "first registration wins"). */
export function fixtureTldOrigins(): Map<string, Provider> {
  const origins = new Map<string, Provider>();
  for (const d of FIXTURE_WORLD.domains) {
    const tld = d.name.slice(d.name.lastIndexOf(".") + 1);
    if (!origins.has(tld)) origins.set(tld, d.provider);
  }
  return origins;
}

/** The domains whose owner set them as its reverse record, for one address. */
export function fixtureReverseOf(address: string): FixtureDomain[] {
  const a = address.toLowerCase();
  return FIXTURE_WORLD.domains.filter((d) => d.reverse && d.owner === a);
}

import { normalizeEnsName, normalizeName } from "../domain/names.js";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import { bulkDrafts } from "./fixture-bulk.js";
import { SNS_COLLISIONS, snsCollisionDrafts } from "./fixture-sol.js";
import {
  ANVIL_ACCOUNTS,
  ANVIL_LABELS,
  createRng,
  type Draft,
  ensRecords,
  fnsRecords,
  GENESIS_HASH160,
  generatedAddress,
  hash160,
  type Profile,
  type Rec,
  unsRecords,
} from "./fixture-values.js";

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
  /** ENS names answered by the devnet's CCIP-Read gateway, not stored on chain. */
  ensOffchain: OffchainEnsWorld;
}

/**
 * ENS names whose records are not on chain (docs/ens-offchain.md). `registered` are .eth names
 * registered through the real controller and then pointed (`setResolver`) at the devnet's
 * offchain resolver: the crawler indexes them with that resolver and no records. `gateway` is
 * what the gateway answers (native ENS keys, as in `FixtureDomain.records`): the registered
 * names' records and the subnames of a wildcard parent that exist only there. A name under the
 * offchain resolver that is not in `gateway` is answered with empty records (zero address, empty
 * text, empty contenthash), as ENS's reference gateway does.
 */
export interface OffchainEnsWorld {
  registered: Array<{
    name: string;
    owner: string;
    /** `offchain`: its own records live at the gateway; `wildcard`: so do its subnames'. */
    role: "offchain" | "wildcard";
    /** Kept in the NameWrapper (true) or unwrapped after registration (false). */
    wrapped: boolean;
    registeredAt: number;
    expiresAt: number;
  }>;
  gateway: Array<{ name: string; records: Array<[nativeKey: string, nativeValue: string]> }>;
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

const HOLDERS = 24;

const A: Provider = "NAMESPACE_A"; // FNS
const B: Provider = "NAMESPACE_B"; // UNS
const C: Provider = "NAMESPACE_C"; // ENS

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
  /** Registered on chain, records only at the CCIP-Read gateway (`FixtureWorld.ensOffchain`). */
  ensOffchain: "offchain.eth",
  ensWildcardParent: "wild.eth",
  /** Subnames that exist only at the gateway, and one that does not exist at all. */
  ensWildcardSubnames: ["alice.wild.eth", "bob.wild.eth"],
  ensWildcardMissing: "nobody.wild.eth",
  /** TLDs sold by two providers, with the provider whose registration came first. */
  sharedTlds: { x: B, wallet: A } as Record<string, Provider>,
  /**
   * FNS `.sol` names (Freename sells a `sol` TLD) that the devnet's Solana Name Service world
   * (sns-fixtures.ts) also holds: the same name on two providers and two kinds of chain.
   */
  snsCollisions: SNS_COLLISIONS,
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

/** Builds the world from scratch; `fixtureWorld()` is its one instance. */
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
  // After the generated names, so that adding them moved no earlier registration.
  const drafts = [...story, ...bulkDrafts(owners, taken, rng), ...snsCollisionDrafts(owners)];

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
  const last = Math.max(...domains.map((d) => d.registeredAt));
  return { domains, owners, ensOffchain: offchainEnsWorld(owners, last) };
}

/**
 * The offchain ENS names, registered a day apart after the rest of the world. Their owners are
 * addresses of their own, holding nothing else: the judges that compare what each fixture owner
 * holds on chain with the API read `domains` only.
 */
function offchainEnsWorld(o: Record<string, string>, after: number): OffchainEnsWorld {
  const at = (i: number) => after + (i + 1) * DAY;
  const owner = (name: string) => generatedAddress(`ens-offchain ${name}`);
  const registered: OffchainEnsWorld["registered"] = [
    { name: NOTABLE.ensOffchain, role: "offchain", wrapped: false, registeredAt: at(0) },
    { name: NOTABLE.ensWildcardParent, role: "wildcard", wrapped: true, registeredAt: at(1) },
  ].map((r) => ({
    ...r,
    owner: owner(r.name),
    role: r.role as "offchain" | "wildcard",
    expiresAt: r.registeredAt + 10 * YEAR,
  }));
  const [alice, bob] = NOTABLE.ensWildcardSubnames;
  const gateway: OffchainEnsWorld["gateway"] = [
    {
      name: NOTABLE.ensOffchain,
      records: ensRecords(NOTABLE.ensOffchain, {
        eth: [o.erin],
        btc: [hash160("offchain-eth")],
        website: ["https://offchain.example.com"],
        avatar: "https://offchain.example.com/avatar.png",
        twitter: ["offchain_eth"],
        ipfs: ["offchain-site"],
      }),
    },
    {
      name: NOTABLE.ensWildcardParent,
      records: ensRecords(NOTABLE.ensWildcardParent, { description: "Subnames answered by a gateway" }),
    },
    {
      name: alice,
      records: ensRecords(alice, {
        eth: [o.alice],
        website: ["https://alice.wild.example.com"],
        avatar: "https://alice.wild.example.com/a.png",
        twitter: ["alice_wild"],
        ipfs: ["alice-wild-site"],
      }),
    },
    {
      name: bob,
      records: ensRecords(bob, { eth: [o.bob], btc: [hash160("bob-wild")], twitter: ["bob_wild"] }),
    },
  ];
  return { registered, gateway };
}

let fixtureWorldInstance: FixtureWorld | null = null;

/**
 * The fixture world, built on first use: building it normalizes every name (ENSIP-15's tables take
 * a few hundred ms to load), which a restart that resumes its devnet never needs.
 */
export function fixtureWorld(): FixtureWorld {
  fixtureWorldInstance ??= buildFixtureWorld();
  return fixtureWorldInstance;
}

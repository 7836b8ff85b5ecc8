import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import { ANVIL_LABELS, type Draft, hash160, type Profile } from "./fixture-values.js";

const A: Provider = "NAMESPACE_A"; // FNS
const B: Provider = "NAMESPACE_B"; // UNS
const C: Provider = "NAMESPACE_C"; // ENS

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

/**
 * The world's bulk: generated names per (provider, network), interleaved in registration order,
 * owned by anvil accounts and generated holders. `taken` holds the story's names (and grows).
 */
export function bulkDrafts(o: Record<string, string>, taken: Set<string>, rng: () => number): Draft[] {
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

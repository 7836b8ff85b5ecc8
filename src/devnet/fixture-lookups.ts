import { normalizeEnsName, normalizeName } from "../domain/names.js";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import { fixtureWorld, type FixtureDomain } from "./fixtures.js";

// Look-ups of the fixture world, for tests and the seeder.

function normalizeAny(input: string): string | null {
  const n = normalizeName(input);
  if (n.ok) return n.value.name;
  const e = normalizeEnsName(input);
  return e.ok ? e.value.name : null;
}

/** Every domain of that name across providers and networks, in registration order. */
export function fixturesByName(input: string): FixtureDomain[] {
  const name = normalizeAny(input);
  return name === null ? [] : fixtureWorld().domains.filter((d) => d.name === name);
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
  return fixtureWorld().domains.filter((d) => d.provider === provider && d.network === network);
}

/** Names held by more than one (provider, network): the collisions, sorted. */
export const COLLISION_NAMES: readonly string[] = (() => {
  const counts = new Map<string, number>();
  for (const d of fixtureWorld().domains) counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
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
  for (const d of fixtureWorld().domains) {
    const tld = d.name.slice(d.name.lastIndexOf(".") + 1);
    if (!origins.has(tld)) origins.set(tld, d.provider);
  }
  return origins;
}

/** The domains whose owner set them as its reverse record, for one address. */
export function fixtureReverseOf(address: string): FixtureDomain[] {
  const a = address.toLowerCase();
  return fixtureWorld().domains.filter((d) => d.reverse && d.owner === a);
}

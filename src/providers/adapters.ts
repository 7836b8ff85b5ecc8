import type { Provider } from "../domain/providers.js";
import { ensAdapter } from "./ens/ens.adapter.js";
import { fnsAdapter } from "./fns/fns.adapter.js";
import type { ProviderAdapter } from "./provider.js";
import { snsAdapter } from "./sns/sns.adapter.js";
import { unsAdapter } from "./uns/uns.adapter.js";

/** Every provider adapter, in provider order. Adding a protocol = one folder and one line here. */
export const ADAPTERS: readonly ProviderAdapter[] = [fnsAdapter, unsAdapter, ensAdapter, snsAdapter];

/** The adapter of a provider, or null for one without an adapter. */
export function adapterFor(provider: Provider): ProviderAdapter | null {
  return ADAPTERS.find((a) => a.provider === provider) ?? null;
}

/**
 * The canonical records of one native record (docs/records.md), for a provider; with no adapter the key
 * is kept as is. An empty value (a deletion) maps to []. Used to replay stored native records after
 * a mapping change without re-crawling.
 *
 * @example mapNativeRecords("NAMESPACE_B", "crypto.ETH.address", "0xabc…") // [{ key: "token.ETH.0", value: "0xabc…" }]
 */
export function mapNativeRecords(
  provider: Provider,
  nativeKey: string,
  nativeValue: string,
): Array<{ key: string; value: string }> {
  if (nativeValue === "") return [];
  const adapter = adapterFor(provider);
  return adapter === null
    ? [{ key: nativeKey, value: nativeValue }]
    : adapter.mapRecord(nativeKey, nativeValue);
}

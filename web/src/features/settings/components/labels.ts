import { PROVIDERS } from "@omniname/wire/providers";
import type { Network, Provider } from "../../../types";

// How namespaces and networks are named on every page of the console.

export const providerLabel = (p: Provider) => `${PROVIDERS[p].label}`;
const NETWORK_LABELS: Record<Network, string> = {
  ETHEREUM: "Ethereum",
  POLYGON: "Polygon",
  BSC: "BNB Smart Chain",
  AURORA: "Aurora",
  SOLANA: "Solana",
};
export const networkLabel = (n: Network) => NETWORK_LABELS[n] ?? n;

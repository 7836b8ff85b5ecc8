import { Type } from "@sinclair/typebox";

/** Mainnet's PublicResolver deployments (docs/chain-facts.md): their records are in the index. */
export const MAINNET_STORAGE_RESOLVERS = [
  "0xf29100983e058b709f3d539b0c765937b804ac15",
  "0x231b0ee14048e9dccd1d247744d114a4eb5e8e63",
  "0x4976fb03c32e5b8cfe2b6ccb31c09ba78ebaba41",
] as const;

/**
 * ENS names answered by their resolver instead of the index (docs/ens-offchain.md): wildcard
 * (ENSIP-10) and CCIP-Read (EIP-3668) resolvers. Spread into ConfigSchema after the webhooks'.
 */
export const ENS_OFFCHAIN_SETTINGS = {
  ensLiveLookup: Type.Boolean({
    default: true,
    env: "ENS_LIVE_LOOKUP",
    description:
      "ENS names whose resolver is not a known storage resolver (wildcard, CCIP-Read offchain) are answered by calling the resolver on the ETHEREUM RPC and its gateway; false: from the index alone, tagged offchain-not-resolved",
  }),
  ensStorageResolvers: Type.String({
    default: MAINNET_STORAGE_RESOLVERS.join(","),
    pattern: "^(0x[0-9a-fA-F]{40})?(,0x[0-9a-fA-F]{40})*$",
    env: "ENS_STORAGE_RESOLVERS",
    description:
      "Comma-separated resolver addresses whose records the crawler indexes (answered from the index); default mainnet's PublicResolvers; the embedded devnet adds its own",
  }),
  ensLiveTimeoutMs: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 4_000,
    env: "ENS_LIVE_TIMEOUT_MS",
    description:
      "Time bound of one live lookup (every record, every gateway round trip); past it the answer is 502 OFFCHAIN_LOOKUP_FAILED",
  }),
  ensLiveCacheMs: Type.Integer({
    minimum: 0,
    maximum: 86_400_000,
    default: 60_000,
    env: "ENS_LIVE_CACHE_MS",
    description:
      "How long a live lookup's answer is reused for the same name while the map's entry of its resolver is unchanged (shared by the API processes through Redis, or PostgreSQL without it); 0: never",
  }),
  ensGatewayAllowLoopback: Type.Boolean({
    default: false,
    env: "ENS_GATEWAY_ALLOW_LOOPBACK",
    description:
      "CCIP-Read gateways may be http:// on loopback (the embedded devnet's own gateway); never private, link-local or other non-public addresses. The embedded devnet turns it on by itself",
  }),
};

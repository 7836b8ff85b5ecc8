import { ADDR_REVERSE_NODE, ETH_NODE, reverseNode } from "../namehash.js";
import type { NameTreeRules } from "../provider.js";

// namehash("reverse"): the reverse tree (addr.reverse, default.reverse, …) holds no names.
const REVERSE_NODE = "0xa097f6721ce401e757d1223a763fef49b8b5f90bb18567ddb86fd205dff71d34";
const REVERSE_TREE = new Set<string>([REVERSE_NODE, ADDR_REVERSE_NODE]);

// Labels every ENS deployment uses, whose plaintext no event carries (the root's NewOwner).
const KNOWN_LABELS: Record<string, string> = {
  "0x4f5b812789fc606be1b3b16908db13fc7a9adf7ca72641f84d75b47069d3d7f0": "eth",
  "0xdec08c9dbbdd0890e300eb5062089b2d4b1c40e3673bbccb5423f7b37dcf9a9c": "reverse",
  "0xe5e14487b78f85faa6e1808e89246cf57dd34831548ff2e6097380d98db2504a": "addr",
};

/**
 * ENS's name tree, for the crawler's projection. ENS keeps two owners: the NFT holder (registrar
 * and wrapper transfers) owns a `.eth` second-level name, the latest of NFT holder and registry
 * owner every other node (ens-decode.ts). Reverse bookkeeping (`*.addr.reverse`) is not a name,
 * and an address's primary name is the name() record of its reverse node (ENSIP-19).
 *
 * @example ensNameTree.knownLabel?.(labelhash("eth")) // "eth"
 */
export const ensNameTree: NameTreeRules = {
  ownedByNftHolder: (t) => t.parentTokenId === ETH_NODE,
  isNameToken: (t) =>
    !REVERSE_TREE.has(t.tokenId) && !(t.parentTokenId !== null && REVERSE_TREE.has(t.parentTokenId)),
  knownLabel: (labelHash) => KNOWN_LABELS[labelHash] ?? null,
  reverseNodeOf: reverseNode,
};

import { hexToBigInt, keccak256, toBytes } from "viem";
import { describe, expect, it } from "vitest";
import { ADDR_REVERSE_NODE, ETH_NODE, labelhash, namehash, reverseNode } from "../namehash.js";
import type { RawLog } from "../provider.js";
import { A, ALICE, ALICE_ETH, ALICE_LABEL, ANY, BOB, decode, log, SUB, wire, ZERO } from "./ens.testing.js";
import { ENS_SIGNATURES as S } from "./ens-topics.js";

type Case = [string, RawLog, unknown[]];

const registryCases: Case[] = [
  [
    "NewOwner of a subname: subnode + registry owner",
    log(S.NewOwner, { node: ALICE_ETH, label: labelhash("sub"), owner: BOB }, A.registry),
    [
      { type: "subnode", tokenId: SUB, parentTokenId: ALICE_ETH, labelHash: labelhash("sub") },
      { type: "registry-owner", tokenId: SUB, owner: BOB },
    ],
  ],
  [
    "NewOwner of a .eth 2LD: subnode only (the registrar NFT owns it)",
    log(S.NewOwner, { node: ETH_NODE, label: ALICE_LABEL, owner: ALICE }, A.registry),
    [{ type: "subnode", tokenId: ALICE_ETH, parentTokenId: ETH_NODE, labelHash: ALICE_LABEL }],
  ],
  [
    "NewOwner to the NameWrapper: subnode only (the ERC-1155 mint owns it)",
    log(S.NewOwner, { node: ALICE_ETH, label: labelhash("sub"), owner: A.nameWrapper }, A.registry),
    [{ type: "subnode", tokenId: SUB, parentTokenId: ALICE_ETH, labelHash: labelhash("sub") }],
  ],
  [
    "NewOwner of a reverse node: nothing (not a domain)",
    log(
      S.NewOwner,
      { node: ADDR_REVERSE_NODE, label: keccak256(toBytes(ALICE.slice(2))), owner: ALICE },
      A.registry,
    ),
    [],
  ],
  [
    "registry Transfer",
    log(S.RegistryTransfer, { node: SUB, owner: BOB }, A.registry),
    [{ type: "registry-owner", tokenId: SUB, owner: BOB }],
  ],
  [
    "registry Transfer to the NameWrapper",
    log(S.RegistryTransfer, { node: SUB, owner: A.nameWrapper }, A.registry),
    [],
  ],
  [
    "NewResolver",
    log(S.NewResolver, { node: ALICE_ETH, resolver: ANY }, A.registry),
    [{ type: "resolver", tokenId: ALICE_ETH, resolver: ANY }],
  ],
];

const registrarCases: Case[] = [
  [
    "an ERC-721 mint, id = labelhash → node under .eth",
    log(S.Erc721Transfer, { from: ZERO, to: ALICE, tokenId: hexToBigInt(ALICE_LABEL) }, A.baseRegistrar),
    [{ type: "transfer", tokenId: ALICE_ETH, from: ZERO, to: ALICE }],
  ],
  [
    "an ERC-721 transfer out of the wrapper (unwrap)",
    log(
      S.Erc721Transfer,
      { from: A.nameWrapper, to: ALICE, tokenId: hexToBigInt(ALICE_LABEL) },
      A.baseRegistrar,
    ),
    [{ type: "transfer", tokenId: ALICE_ETH, from: A.nameWrapper, to: ALICE }],
  ],
  [
    "an ERC-721 transfer into the wrapper",
    log(
      S.Erc721Transfer,
      { from: ALICE, to: A.nameWrapper, tokenId: hexToBigInt(ALICE_LABEL) },
      A.baseRegistrar,
    ),
    [],
  ],
  [
    "an ERC-721 burn (re-registration)",
    log(S.Erc721Transfer, { from: ALICE, to: ZERO, tokenId: hexToBigInt(ALICE_LABEL) }, A.baseRegistrar),
    [],
  ],
  [
    "registrar NameRegistered",
    log(
      S.BaseNameRegistered,
      { id: hexToBigInt(ALICE_LABEL), owner: ALICE, expires: 1_900_000_000n },
      A.baseRegistrar,
    ),
    [
      { type: "subnode", tokenId: ALICE_ETH, parentTokenId: ETH_NODE, labelHash: ALICE_LABEL },
      { type: "expiry", tokenId: ALICE_ETH, expiresAt: 1_900_000_000 },
    ],
  ],
  [
    "registrar NameMigrated",
    log(
      S.NameMigrated,
      { id: hexToBigInt(ALICE_LABEL), owner: ALICE, expires: 1_700_000_000n },
      A.baseRegistrar,
    ),
    [
      { type: "subnode", tokenId: ALICE_ETH, parentTokenId: ETH_NODE, labelHash: ALICE_LABEL },
      { type: "expiry", tokenId: ALICE_ETH, expiresAt: 1_700_000_000 },
    ],
  ],
  [
    "registrar NameRenewed",
    log(S.BaseNameRenewed, { id: hexToBigInt(ALICE_LABEL), expires: 2_000_000_000n }, A.baseRegistrar),
    [{ type: "expiry", tokenId: ALICE_ETH, expiresAt: 2_000_000_000 }],
  ],
];

const NAME_ALICE = [{ type: "name", tokenId: ALICE_ETH, name: "alice.eth", parentTokenId: ETH_NODE }];
const controllerCases: Case[] = [
  [
    "legacy controller NameRegistered",
    log(
      S.LegacyNameRegistered,
      { name: "alice", label: ALICE_LABEL, owner: ALICE, cost: 1n, expires: 2n },
      A["controller:legacy"],
    ),
    NAME_ALICE,
  ],
  [
    "wrapped controller NameRegistered",
    log(
      S.WrappedNameRegistered,
      { name: "alice", label: ALICE_LABEL, owner: ALICE, baseCost: 1n, premium: 0n, expires: 2n },
      A["controller:wrapped"],
    ),
    NAME_ALICE,
  ],
  [
    "unwrapped controller NameRegistered",
    log(
      S.UnwrappedNameRegistered,
      {
        label: "alice",
        labelhash: ALICE_LABEL,
        owner: ALICE,
        baseCost: 1n,
        premium: 0n,
        expires: 2n,
        referrer: `0x${"0".repeat(64)}`,
      },
      A["controller:unwrapped"],
    ),
    NAME_ALICE,
  ],
  [
    "controller NameRenewed",
    log(
      S.ControllerNameRenewed,
      { name: "alice", label: ALICE_LABEL, cost: 1n, expires: 2n },
      A["controller:legacy"],
    ),
    NAME_ALICE,
  ],
  [
    "unwrapped controller NameRenewed",
    log(
      S.UnwrappedNameRenewed,
      { label: "alice", labelhash: ALICE_LABEL, cost: 1n, expires: 2n, referrer: `0x${"0".repeat(64)}` },
      A["controller:unwrapped"],
    ),
    NAME_ALICE,
  ],
  [
    "an emoji name",
    log(
      S.LegacyNameRegistered,
      { name: "💩", label: labelhash("💩"), owner: ALICE, cost: 1n, expires: 2n },
      A["controller:legacy"],
    ),
    [{ type: "name", tokenId: namehash("💩.eth"), name: "💩.eth", parentTokenId: ETH_NODE }],
  ],
  [
    // The label's UTF-8 bytes are hashed, as Solidity's keccak256(bytes(label)): a label that looks
    // like hex is text too.
    "a hex-looking name",
    log(
      S.LegacyNameRegistered,
      { name: "0xab", label: labelhash("0xab"), owner: ALICE, cost: 1n, expires: 2n },
      A["controller:legacy"],
    ),
    [{ type: "name", tokenId: namehash("0xab.eth"), name: "0xab.eth", parentTokenId: ETH_NODE }],
  ],
];

describe("ensAdapter.decode: registry, registrar, controllers", () => {
  it.each([...registryCases, ...registrarCases, ...controllerCases])("decodes %s", (_, raw, events) => {
    expect(decode(raw)).toEqual({ ok: true, events });
  });

  const bad: Array<[string, RawLog, RegExp]> = [
    [
      "a controller label that does not hash to its topic",
      log(
        S.LegacyNameRegistered,
        { name: "bob", label: ALICE_LABEL, owner: ALICE, cost: 1n, expires: 2n },
        A["controller:legacy"],
      ),
      /does not hash/,
    ],
    [
      "an unnormalized controller label",
      log(
        S.LegacyNameRegistered,
        { name: "Alice", label: labelhash("Alice"), owner: ALICE, cost: 1n, expires: 2n },
        A["controller:legacy"],
      ),
      /not ENSIP-15 normalized/,
    ],
    [
      "a controller label with a dot",
      log(
        S.LegacyNameRegistered,
        { name: "a.b", label: labelhash("a.b"), owner: ALICE, cost: 1n, expires: 2n },
        A["controller:legacy"],
      ),
      /dot/,
    ],
    [
      "a controller label with a NUL",
      log(
        S.LegacyNameRegistered,
        { name: "a\u0000b", label: keccak256(toBytes("a\u0000b")), owner: ALICE, cost: 1n, expires: 2n },
        A["controller:legacy"],
      ),
      /normalization/,
    ],
    [
      "a controller event from a non-controller",
      log(
        S.LegacyNameRegistered,
        { name: "alice", label: ALICE_LABEL, owner: ALICE, cost: 1n, expires: 2n },
        ANY,
      ),
      /unexpected contract/,
    ],
    [
      "a registrar Transfer from another ERC-721",
      log(S.Erc721Transfer, { from: ZERO, to: ALICE, tokenId: 1n }, ANY),
      /unexpected contract/,
    ],
    [
      "a NameWrapped whose name is not its node's",
      log(
        S.NameWrapped,
        { node: SUB, name: wire("alice.eth"), owner: ALICE, fuses: 0, expiry: 0n },
        A.nameWrapper,
      ),
      /does not hash/,
    ],
    [
      "a NameWrapped with a compressed name",
      log(
        S.NameWrapped,
        { node: SUB, name: "0x03737562c000", owner: ALICE, fuses: 0, expiry: 0n },
        A.nameWrapper,
      ),
      /DNS-encoded/,
    ],
    [
      "a NameWrapped with a truncated name",
      log(
        S.NameWrapped,
        { node: SUB, name: "0x05616c6963", owner: ALICE, fuses: 0, expiry: 0n },
        A.nameWrapper,
      ),
      /DNS-encoded/,
    ],
    [
      "a NameWrapped of an unnormalized name",
      log(
        S.NameWrapped,
        { node: namehash("ALICE.eth"), name: wire("ALICE.eth"), owner: ALICE, fuses: 0, expiry: 0n },
        A.nameWrapper,
      ),
      /not ENSIP-15 normalized/,
    ],
    [
      "a ReverseClaimed whose node is not the address's",
      log(S.ReverseClaimed, { addr: ALICE, node: reverseNode(BOB) }, ANY),
      /not the reverse node/,
    ],
    [
      "an unnormalized NameForAddrChanged",
      log(S.NameForAddrChanged, { addr: ALICE, name: "Alice.eth" }, A.defaultReverseRegistrar),
      /not normalized/,
    ],
    [
      "a NameForAddrChanged from another contract",
      log(S.NameForAddrChanged, { addr: ALICE, name: "alice.eth" }, ANY),
      /unexpected contract/,
    ],
    [
      "a registrar expiry above 2^53",
      log(S.BaseNameRenewed, { id: 1n, expires: 2n ** 60n }, A.baseRegistrar),
      /malformed/,
    ],
  ];
  it.each(bad)("refuses %s with a reason", (_, raw, reason) => {
    const r = decode(raw);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(reason);
  });
});

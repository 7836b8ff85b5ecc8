import { hexToBigInt } from "viem";
import { describe, expect, it } from "vitest";
import { ETH_NODE, reverseNode } from "../namehash.js";
import type { RawLog } from "../provider.js";
import { A, ALICE, ALICE_ETH, ANY, BOB, decode, log, SUB, wire, ZERO } from "./ens.testing.js";
import { ENS_SIGNATURES as S } from "./ens-topics.js";

type Case = [string, RawLog, unknown[]];

const NAME_ALICE = [{ type: "name", tokenId: ALICE_ETH, name: "alice.eth", parentTokenId: ETH_NODE }];

const PCC = 0x10000;
const wrapperCases: Case[] = [
  [
    "NameWrapped of a .eth 2LD (its expiry stays the registrar's)",
    log(
      S.NameWrapped,
      { node: ALICE_ETH, name: wire("alice.eth"), owner: ALICE, fuses: PCC, expiry: 1_900_000_000n },
      A.nameWrapper,
    ),
    NAME_ALICE,
  ],
  [
    "NameWrapped of a subname with PARENT_CANNOT_CONTROL: name + expiry",
    log(
      S.NameWrapped,
      { node: SUB, name: wire("sub.alice.eth"), owner: ALICE, fuses: PCC, expiry: 1_800_000_000n },
      A.nameWrapper,
    ),
    [
      { type: "name", tokenId: SUB, name: "sub.alice.eth", parentTokenId: ALICE_ETH },
      { type: "expiry", tokenId: SUB, expiresAt: 1_800_000_000 },
    ],
  ],
  [
    "NameWrapped of a subname without the fuse: name only",
    log(
      S.NameWrapped,
      { node: SUB, name: wire("sub.alice.eth"), owner: ALICE, fuses: 0, expiry: 1_800_000_000n },
      A.nameWrapper,
    ),
    [{ type: "name", tokenId: SUB, name: "sub.alice.eth", parentTokenId: ALICE_ETH }],
  ],
  [
    "NameUnwrapped",
    log(S.NameUnwrapped, { node: SUB, owner: BOB }, A.nameWrapper),
    [{ type: "registry-owner", tokenId: SUB, owner: BOB }],
  ],
  [
    "TransferSingle mint (wrap)",
    log(
      S.TransferSingle,
      { operator: ANY, from: ZERO, to: ALICE, id: hexToBigInt(ALICE_ETH), value: 1n },
      A.nameWrapper,
    ),
    [{ type: "transfer", tokenId: ALICE_ETH, from: ZERO, to: ALICE }],
  ],
  [
    "TransferSingle burn (unwrap)",
    log(
      S.TransferSingle,
      { operator: ANY, from: ALICE, to: ZERO, id: hexToBigInt(ALICE_ETH), value: 1n },
      A.nameWrapper,
    ),
    [],
  ],
  [
    "TransferBatch",
    log(
      S.TransferBatch,
      {
        operator: ANY,
        from: ALICE,
        to: BOB,
        ids: [hexToBigInt(ALICE_ETH), hexToBigInt(SUB)],
        values: [1n, 1n],
      },
      A.nameWrapper,
    ),
    [
      { type: "transfer", tokenId: ALICE_ETH, from: ALICE, to: BOB },
      { type: "transfer", tokenId: SUB, from: ALICE, to: BOB },
    ],
  ],
];

const REV = reverseNode(ALICE);
const reverseCases: Case[] = [
  [
    "ReverseClaimed (checked, from any contract)",
    log(S.ReverseClaimed, { addr: ALICE, node: REV }, ANY),
    [{ type: "reverse-node", tokenId: REV, address: ALICE }],
  ],
  [
    "NameForAddrChanged",
    log(S.NameForAddrChanged, { addr: ALICE, name: "alice.eth" }, A.defaultReverseRegistrar),
    [{ type: "reverse-name", address: ALICE, name: "alice.eth" }],
  ],
  [
    "NameForAddrChanged to empty",
    log(S.NameForAddrChanged, { addr: ALICE, name: "" }, A.defaultReverseRegistrar),
    [{ type: "reverse-removed", address: ALICE }],
  ],
  [
    "NameChanged on a node",
    log(S.NameChanged, { node: REV, name: "alice.eth" }, ANY),
    [{ type: "node-name", tokenId: REV, name: "alice.eth" }],
  ],
  [
    "NameChanged to empty",
    log(S.NameChanged, { node: REV, name: "" }, ANY),
    [{ type: "node-name", tokenId: REV, name: "" }],
  ],
];

describe("ensAdapter.decode: wrapper, reverse registrars", () => {
  it.each([...wrapperCases, ...reverseCases])("decodes %s", (_, raw, events) => {
    expect(decode(raw)).toEqual({ ok: true, events });
  });
});

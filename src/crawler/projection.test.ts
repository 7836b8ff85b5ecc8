import { describe, expect, it } from "vitest";
import { ZERO_ADDRESS } from "../domain/address.js";
import { normalizeName } from "../domain/names.js";
import { ensAdapter } from "../providers/ens/ens.adapter.js";
import { ETH_NODE, reverseNode } from "../providers/namehash.js";
import type { DomainEvent, Hex } from "../providers/provider.js";
import type { JournalEvent } from "./journal-event.js";
import {
  type DataIssue,
  foldKeyOf,
  foldReverse,
  foldToken,
  isDomainState,
  MAX_RECORD_BYTES,
  type ProjectionContext,
  projectDomain,
} from "./projection.js";

const T = `0x${"a".repeat(64)}` as Hex;
const ALICE = "0x00000000000000000000000000000000000a11ce";
const BOB = "0x0000000000000000000000000000000000000b0b";
const REGISTRY = "0x1111111111111111111111111111111111111111";
const RESOLVER = "0x2222222222222222222222222222222222222222";
const OTHER = "0x3333333333333333333333333333333333333333";

let position = 0;
function at(event: DomainEvent, block: number, contract = REGISTRY): JournalEvent {
  return { event, blockNumber: block, logIndex: position++, blockTime: 1_700_000_000 + block, contract };
}
const mint = (block: number, to = ALICE) =>
  at({ type: "transfer", tokenId: T, from: ZERO_ADDRESS, to }, block);
const rec = (k: string, v: string, block: number, contract = REGISTRY) =>
  at({ type: "record", tokenId: T, nativeKey: k, nativeValue: v }, block, contract);

// A mapping with a collision: both native keys produce content.IPFS.0, as UNS ipfs.html.value and dweb.ipfs.hash do.
const mapRecord = (k: string, v: string) =>
  k === "ipfs.html.value" || k === "dweb.ipfs.hash"
    ? [{ key: "content.IPFS.0", value: v }]
    : [{ key: k, value: v }];
// A flat NFT registry (UNS, FNS), and ENS's name rules and tree with the same record mapping.
const ctx: ProjectionContext = { normalizeName, mapRecord };
const ens: ProjectionContext = { normalizeName: ensAdapter.normalizeName, mapRecord, tree: ensAdapter.tree };

function project(events: JournalEvent[], protocol: "flat" | "ens" = "flat") {
  const issues: DataIssue[] = [];
  const rules = protocol === "ens" ? ens : ctx;
  const s = foldToken(T, events, rules.tree);
  const p = projectDomain(s, rules, () => null, issues);
  return { s, p, issues, records: Object.fromEntries(p.records.map((r) => [r.key, r.value])) };
}

describe("foldToken / projectDomain", () => {
  it("folds a mint, its name and records into a domain registered at the mint's block", () => {
    const { s, p, records } = project([
      mint(10),
      at({ type: "name", tokenId: T, name: "alice.crypto" }, 10),
      rec("crypto.ETH.address", ALICE, 11),
      at({ type: "expiry", tokenId: T, expiresAt: 1_800_000_000 }, 12),
    ]);
    expect(isDomainState(s)).toBe(true);
    expect(p).toMatchObject({
      name: "alice.crypto",
      sld: "alice",
      tld: "crypto",
      owner: ALICE,
      registeredBlock: 10,
      registeredAt: 1_700_000_010_000,
      lastUpdateBlock: 12,
      lastUpdateAt: 1_700_000_012_000,
      expiresAt: 1_800_000_000_000,
      contractAddress: REGISTRY,
    });
    expect(records).toEqual({ "crypto.ETH.address": ALICE });
  });

  it.each<[string, (block: number) => JournalEvent[], Record<string, string>]>([
    ["an empty value deletes a record", (b) => [rec("a", "1", b), rec("a", "", b + 1)], {}],
    [
      "the latest of two colliding native keys wins",
      (b) => [rec("ipfs.html.value", "Qm1", b), rec("dweb.ipfs.hash", "Qm2", b + 1)],
      { "content.IPFS.0": "Qm2" },
    ],
    [
      "deleting the later colliding key brings the earlier one back",
      (b) => [
        rec("ipfs.html.value", "Qm1", b),
        rec("dweb.ipfs.hash", "Qm2", b + 1),
        rec("dweb.ipfs.hash", "", b + 2),
      ],
      { "content.IPFS.0": "Qm1" },
    ],
    [
      "a reset wipes every record",
      (b) => [rec("a", "1", b), at({ type: "records-reset", tokenId: T }, b + 1), rec("b", "2", b + 2)],
      { b: "2" },
    ],
    ["a NUL byte is replaced", (b) => [rec("a", "x\u0000y", b)], { a: "x\ufffdy" }],
    [
      "a value over 64 KiB is dropped",
      (b) => [rec("a", "small", b), rec("a", "v".repeat(MAX_RECORD_BYTES + 1), b + 1)],
      {},
    ],
  ])("%s", (_title, events, expected) => {
    expect(
      project([mint(1), at({ type: "name", tokenId: T, name: "a.crypto" }, 1), ...events(2)]).records,
    ).toEqual(expected);
  });

  it("reports bad values and flags a name that fails normalization", () => {
    const { p, issues } = project([
      mint(1),
      at({ type: "name", tokenId: T, name: "bad name.crypto" }, 1),
      rec("a", "x\u0000", 2),
      rec("b", "v".repeat(100_000), 2),
    ]);
    expect(p.nameInvalid).toBe(true);
    expect(p.name).toBe(`[${"a".repeat(64)}]`);
    expect(issues.map((i) => i.reason).sort()).toEqual(["invalid-name", "record-nul", "record-too-large"]);
  });

  it("a burn ends the domain; a new mint starts a new registration", () => {
    const burn = at({ type: "transfer", tokenId: T, from: ALICE, to: ZERO_ADDRESS }, 5);
    expect(isDomainState(foldToken(T, [mint(1), burn]))).toBe(false);
    const s = foldToken(T, [mint(1), burn, mint(9, BOB)]);
    expect(s).toMatchObject({ owner: BOB, registeredBlock: 9 });
  });

  it("a transfer keeps the registration of the mint", () => {
    const s = foldToken(T, [mint(1), at({ type: "transfer", tokenId: T, from: ALICE, to: BOB }, 4)]);
    expect(s).toMatchObject({ owner: BOB, registeredBlock: 1 });
  });

  it("ENS: only the current resolver's records count", () => {
    const events = [
      mint(1),
      at({ type: "resolver", tokenId: T, resolver: RESOLVER }, 1),
      rec("text.url", "https://a", 2, RESOLVER),
      rec("text.url", "https://spam", 2, OTHER),
    ];
    expect(project(events, "ens").records).toEqual({ "text.url": "https://a" });
    const moved = [...events, at({ type: "resolver", tokenId: T, resolver: OTHER }, 3)];
    expect(project(moved, "ens").records).toEqual({ "text.url": "https://spam" });
    const none = [...events, at({ type: "resolver", tokenId: T, resolver: ZERO_ADDRESS }, 3)];
    expect(project(none, "ens").records).toEqual({});
  });

  it("ENS: a .eth second-level name is owned by its NFT holder, not its registry owner", () => {
    const label = `0x${"b".repeat(64)}` as Hex;
    const s = foldToken(
      T,
      [
        at({ type: "subnode", tokenId: T, parentTokenId: ETH_NODE, labelHash: label }, 1),
        mint(1),
        at({ type: "registry-owner", tokenId: T, owner: BOB }, 2),
      ],
      ens.tree,
    );
    expect(s.owner).toBe(ALICE);
    // A subname follows its registry owner.
    const sub = foldToken(
      T,
      [
        at({ type: "subnode", tokenId: T, parentTokenId: `0x${"c".repeat(64)}`, labelHash: label }, 1),
        at({ type: "registry-owner", tokenId: T, owner: ALICE }, 1),
        at({ type: "registry-owner", tokenId: T, owner: BOB }, 2),
      ],
      ens.tree,
    );
    expect(sub).toMatchObject({ owner: BOB, registeredBlock: 1 });
  });

  it("ENS: a node known only by its label hash reads [hash].<parent>, until its name arrives", () => {
    const label = `0x${"b".repeat(64)}` as Hex;
    const events = [
      at({ type: "subnode", tokenId: T, parentTokenId: ETH_NODE, labelHash: label }, 1),
      mint(1),
    ];
    const p = projectDomain(foldToken(T, events, ens.tree), ens, () => "eth", []);
    expect(p).toMatchObject({
      name: `[${"b".repeat(64)}].eth`,
      sld: `[${"b".repeat(64)}]`,
      tld: "eth",
      nameInvalid: false,
    });
    const named = [...events, at({ type: "name", tokenId: T, name: "bob.eth", parentTokenId: ETH_NODE }, 1)];
    expect(projectDomain(foldToken(T, named, ens.tree), ens, () => "eth", []).name).toBe("bob.eth");
  });

  it("ENS: a reverse node is not a domain", () => {
    const s = foldToken(T, [
      at({ type: "registry-owner", tokenId: T, owner: ALICE }, 1),
      at({ type: "reverse-node", tokenId: T, address: ALICE }, 1),
    ]);
    expect(isDomainState(s)).toBe(false);
    expect(s.reverseOf).toBe(ALICE);
  });
});

describe("foldReverse", () => {
  const claim = (event: DomainEvent, block: number) => at(event, block);
  it.each<[string, DomainEvent[], string | null, ReturnType<typeof foldReverse>]>([
    ["a set", [{ type: "reverse-set", address: ALICE, tokenId: T }], null, { tokenId: T }],
    [
      "a removal after a set",
      [
        { type: "reverse-set", address: ALICE, tokenId: T },
        { type: "reverse-removed", address: ALICE },
      ],
      null,
      null,
    ],
    [
      "an ENS default name",
      [{ type: "reverse-name", address: ALICE, name: "alice.eth" }],
      null,
      { name: "alice.eth" },
    ],
    [
      "the reverse node's name wins over the default",
      [{ type: "reverse-name", address: ALICE, name: "alice.eth" }],
      "main.eth",
      { name: "main.eth" },
    ],
  ])("%s", (_t, events, nodeName, expected) => {
    expect(
      foldReverse(
        events.map((e, i) => claim(e, i)),
        nodeName,
      ),
    ).toEqual(expected);
  });

  it("keys reverse claims by address and ENS reverse nodes by node", () => {
    expect(foldKeyOf({ type: "reverse-set", address: ALICE, tokenId: T })).toBe(`reverse:${ALICE}`);
    const node = reverseNode(ALICE);
    expect(foldKeyOf({ type: "node-name", tokenId: node, name: "a.eth" })).toBe(node);
  });
});

import { type AbiEvent, parseAbiItem, toEventSelector } from "viem";
import { describe, expect, it } from "vitest";
import { A, ALICE, ALICE_ETH, ANY, decode, SUB, wire } from "./ens.testing.js";
import { REAL_ENS_ARTIFACTS, type RealEnsArtifact, realEvents, realLog } from "./ens-real-abi.testing.js";
import { ENS_SIGNATURES, ENS_TOPICS } from "./ens-topics.js";

type TopicName = keyof typeof ENS_TOPICS;

/** Topics we decode that none of the real artifacts in the package emits, and why. */
const NOT_IN_ARTIFACTS: Partial<Record<TopicName, string>> = {
  UnwrappedNameRegistered: "UnwrappedETHRegistrarController (2025, with referrer) is not in the package",
  UnwrappedNameRenewed: "UnwrappedETHRegistrarController (2025, with referrer) is not in the package",
  NameForAddrChanged: "the ENSIP-19 DefaultReverseRegistrar is not in the package",
  LegacyTextChanged: "the pre-2020 resolvers' value-less TextChanged is not in the package",
};

/** Real events we do not decode (each reason is in docs/records.md and README.md). */
const NOT_DECODED: Record<string, string> = {
  "ENSRegistry.NewTTL": "TTL is not served",
  "PublicResolver.ABIChanged": "ABI records are not served",
  "PublicResolver.PubkeyChanged": "SECP256k1 pubkey records are not served",
  "PublicResolver.InterfaceChanged": "ERC-165 implementer records are not served",
  "PublicResolver.DNSZonehashChanged": "the zonehash points at an off-chain zone; we serve the records",
  "PublicResolver.Approved": "a delegate's write permission; its writes carry their own events",
  "NameWrapper.URI": "token metadata URI",
};
const ADMIN = new Set(["Approval", "ApprovalForAll", "OwnershipTransferred", "ControllerChanged"]);
const ADMIN_OF: Partial<Record<RealEnsArtifact, string[]>> = {
  BaseRegistrarImplementation: ["ControllerAdded", "ControllerRemoved"],
  LegacyETHRegistrarController: ["NewPriceOracle"],
  ReverseRegistrar: ["DefaultResolverChanged"],
};

const layout = (e: AbiEvent) => e.inputs.map((i) => `${i.type}${i.indexed ? " indexed" : ""}`).join(",");

const real = REAL_ENS_ARTIFACTS.flatMap((artifact) =>
  realEvents(artifact).map((event) => ({ artifact, event, topic0: toEventSelector(event) })),
);

describe("ENS topics against the real contracts' ABIs (@unstoppabledomains/uns artifacts)", () => {
  it.each(Object.keys(ENS_TOPICS) as TopicName[])("%s: same topic0 and indexed layout", (name) => {
    const ours = parseAbiItem(ENS_SIGNATURES[name]) as AbiEvent;
    const matches = real.filter((r) => r.topic0 === ENS_TOPICS[name]);
    if (NOT_IN_ARTIFACTS[name] !== undefined) {
      expect(matches).toEqual([]);
      return;
    }
    expect(matches.length, `no real artifact emits ${name}`).toBeGreaterThan(0);
    for (const m of matches) {
      // topic0 ignores `indexed`; the layout decides which words are topics and which are data.
      expect(layout(m.event), `${m.artifact}.${m.event.name}`).toBe(layout(ours));
      expect(m.event.name).toBe(ours.name);
    }
  });

  it("every real event is decoded, administrative, or listed as not decoded", () => {
    const decoded = new Set<string>(Object.values(ENS_TOPICS));
    const unaccounted = real
      .filter(({ artifact, event, topic0 }) => {
        const key = `${artifact}.${event.name}`;
        if (decoded.has(topic0)) return false;
        if (NOT_DECODED[key] !== undefined) return false;
        return !(ADMIN.has(event.name) || ADMIN_OF[artifact]?.includes(event.name));
      })
      .map(({ artifact, event }) => `${artifact}.${event.name}`);
    expect(unaccounted).toEqual([]);
    // And the list names only events that exist and are not decoded.
    for (const key of Object.keys(NOT_DECODED)) {
      const r = real.find(({ artifact, event }) => `${artifact}.${event.name}` === key);
      expect(r, key).toBeDefined();
    }
  });
});

describe("NameWrapper FusesSet / ExpiryExtended encoded with the real ABI", () => {
  it("ExpiryExtended: the subname's expiry", () => {
    const raw = realLog(
      "NameWrapper",
      "ExpiryExtended",
      { node: SUB, expiry: 1_900_000_000n },
      A.nameWrapper,
    );
    expect(decode(raw)).toEqual({
      ok: true,
      events: [{ type: "expiry", tokenId: SUB, expiresAt: 1_900_000_000 }],
    });
  });

  it("NameWrapped then ExpiryExtended: the later expiry wins (it was stale before)", () => {
    const wrapped = realLog(
      "NameWrapper",
      "NameWrapped",
      { node: SUB, name: wire("sub.alice.eth"), owner: ALICE, fuses: 0x10000, expiry: 1_800_000_000n },
      A.nameWrapper,
    );
    const extended = realLog(
      "NameWrapper",
      "ExpiryExtended",
      { node: SUB, expiry: 1_850_000_000n },
      A.nameWrapper,
    );
    const expiries = [wrapped, extended].flatMap((l) => {
      const r = decode(l);
      return r.ok ? r.events.filter((e) => e.type === "expiry") : [];
    });
    expect(expiries.at(-1)).toEqual({ type: "expiry", tokenId: SUB, expiresAt: 1_850_000_000 });
  });

  it("FusesSet: decoded, nothing for the map", () => {
    const raw = realLog(
      "NameWrapper",
      "FusesSet",
      { node: ALICE_ETH, fuses: 0x10000 | 0x4 | 0x1 },
      A.nameWrapper,
    );
    expect(decode(raw)).toEqual({ ok: true, events: [] });
  });

  it("malformed: a data word too short, a missing node topic, an expiry beyond 2^53", () => {
    const raw = realLog("NameWrapper", "ExpiryExtended", { node: SUB, expiry: 1n }, A.nameWrapper);
    expect(decode({ ...raw, data: "0x01" }).ok).toBe(false);
    expect(decode({ ...raw, topics: raw.topics.slice(0, 1) }).ok).toBe(false);
    const huge = realLog(
      "NameWrapper",
      "ExpiryExtended",
      { node: SUB, expiry: 2n ** 64n - 1n },
      A.nameWrapper,
    );
    expect(decode(huge).ok).toBe(false);
    const fuses = realLog("NameWrapper", "FusesSet", { node: SUB, fuses: 1 }, A.nameWrapper);
    expect(decode({ ...fuses, data: `0x${"ff".repeat(32)}` }).ok).toBe(false);
  });

  it("from a contract that is not the wrapper: refused", () => {
    const raw = realLog("NameWrapper", "ExpiryExtended", { node: SUB, expiry: 1_900_000_000n }, ANY);
    expect(decode(raw).ok).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import type { ChangeEvent, ChangePayload, ChangeType } from "../domain/change-events.js";
import type { DomainWithRecords } from "../domain/types.js";
import { compileProjectRules } from "../scoring/project-rules.js";
import { createScoringRanker } from "../resolution/rank.js";
import { matchesChange, parseChangeFilter } from "./change-filter.js";
import { candidatesBefore, ranksAsDefault, winnerEvent, winnerUnder } from "../scoring/winner-events.js";

const A = `0x${"aa".repeat(32)}`;
const B = `0x${"bb".repeat(32)}`;

function domain(
  tokenId: string,
  provider: "NAMESPACE_A" | "NAMESPACE_B",
  baseScore: number,
): DomainWithRecords {
  return {
    id: tokenId === A ? 1 : 2,
    provider,
    network: "POLYGON",
    tokenId,
    name: "clash.x",
    sld: "clash",
    tld: "x",
    owner: "0x01",
    contractAddress: "0x02",
    resolver: null,
    registeredAt: null,
    registeredBlock: null,
    expiresAt: null,
    lastUpdateBlock: 1,
    lastUpdateAt: 1,
    baseScore,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
    records: [],
  };
}

let nextId = 1;
function event(
  type: ChangeType,
  d: DomainWithRecords,
  payload: ChangePayload,
  projectId: number | null = null,
): ChangeEvent {
  return {
    id: nextId++,
    type,
    createdAt: 1,
    sourceId: "s",
    network: d.network,
    provider: d.provider,
    tokenId: d.tokenId,
    name: d.name,
    tld: d.tld,
    blockNumber: 7,
    blockHash: "0x07",
    txHash: null,
    blockTime: null,
    retracts: null,
    projectId,
    payload,
  };
}

const ranker = createScoringRanker();
/** A winner.changed of clash.x from none to B. */
const toB = (projectId: number | null, at: ChangeEvent | null) =>
  winnerEvent(
    "clash.x",
    "x",
    null,
    { network: "POLYGON", provider: "NAMESPACE_B", tokenId: B },
    projectId,
    at,
    1,
  );
const scope = (projectId: number | null, settings: Record<string, unknown>) => ({
  projectId,
  settings,
  rules: compileProjectRules(settings),
});
const win = (list: DomainWithRecords[], settings: Record<string, unknown> = {}) =>
  winnerUnder(ranker, list, scope(null, settings), 10_000)?.tokenId ?? null;

describe("candidatesBefore", () => {
  const a = domain(A, "NAMESPACE_A", 40);
  const b = domain(B, "NAMESPACE_B", 60);

  it("undoes a creation: the created domain was not a candidate", () => {
    const before = candidatesBefore("clash.x", [a, b], [event("domain.created", b, {})]);
    expect(before.map((d) => d.tokenId)).toEqual([A]);
    expect([win(before), win([a, b])]).toEqual([A, B]);
  });

  it("undoes a removal with the removed domain's prior ranking inputs", () => {
    const prior = { baseScore: 60, registeredAt: null, expiresAt: null, csamOk: true };
    const before = candidatesBefore(
      "clash.x",
      [a],
      [event("domain.removed", b, { owner: { from: "0x01", to: null }, prior })],
    );
    expect(before.map((d) => [d.tokenId, d.baseScore])).toEqual([
      [A, 40],
      [B, 60],
    ]);
    expect(win(before)).toBe(B);
  });

  it("undoes an update's ranking inputs (an expiry, a base score)", () => {
    const expired = { ...b, expiresAt: 5_000 };
    const prior = { baseScore: 60, registeredAt: null, expiresAt: null, csamOk: true };
    const before = candidatesBefore("clash.x", [a, expired], [event("domain.updated", b, { prior })]);
    expect(win([a, expired], {})).toBe(A);
    expect(win(before)).toBe(B);
  });

  it("undoes several events on the name, latest first (a mint then a burn is no change)", () => {
    const prior = { baseScore: 60, registeredAt: null, expiresAt: null, csamOk: true };
    const events = [event("domain.created", b, {}), event("domain.removed", b, { prior })];
    expect(candidatesBefore("clash.x", [a], events).map((d) => d.tokenId)).toEqual([A]);
  });

  it("undoes a rename: the domain leaves its new name and comes back to its old one", () => {
    const prior = { baseScore: 60, registeredAt: null, expiresAt: null, csamOk: true };
    // b was "[hash].x" and now reads "clash.x" (its label became known).
    const renamed = event("domain.updated", b, { nameChanged: { from: "[ab12].x", to: "clash.x" }, prior });
    expect(candidatesBefore("clash.x", [a, b], [renamed]).map((d) => d.tokenId)).toEqual([A]);
    const old = candidatesBefore("[ab12].x", [], [renamed]);
    expect(old.map((d) => [d.tokenId, d.name, d.baseScore])).toEqual([[B, "[ab12].x", 60]]);
  });
});

describe("winner.changed per project", () => {
  const defaults = compileProjectRules({});
  const custom = compileProjectRules({ exceptions: [{ domain: "clash.x", provider: "NAMESPACE_A" }] });
  const none = parseChangeFilter({});
  const b = domain(B, "NAMESPACE_B", 60);

  it("tells the settings that rank as the defaults", () => {
    expect(ranksAsDefault(defaults)).toBe(true);
    expect(ranksAsDefault(compileProjectRules({ providers: { disabled: [] } }))).toBe(true);
    expect(ranksAsDefault(custom)).toBe(false);
    expect(ranksAsDefault(compileProjectRules({ includeExpired: true }))).toBe(false);
    expect(ranksAsDefault(compileProjectRules({ networks: { disabled: ["BSC"] } }))).toBe(false);
  });

  it("a shared event reaches projects with default ranking only; a project's own event reaches it only", () => {
    const w = toB(null, null);
    const shared = { ...w, id: 1 };
    expect(matchesChange(shared, none, defaults, 5)).toBe(true);
    expect(matchesChange(shared, none, custom, 5)).toBe(false);
    const own = { ...w, id: 2, projectId: 5 };
    expect(matchesChange(own, none, custom, 5)).toBe(true);
    expect(matchesChange(own, none, defaults, 5)).toBe(true);
    expect(matchesChange(own, none, custom, 6)).toBe(false);
    // A retraction follows its event's project.
    const retracted = event(
      "change.retracted",
      b,
      { retracted: { type: "winner.changed", payload: w.payload } },
      5,
    );
    expect(matchesChange(retracted, none, custom, 5)).toBe(true);
    expect(matchesChange(retracted, none, custom, 6)).toBe(false);
    // Types and names filter winner.changed as any other event.
    expect(matchesChange(own, parseChangeFilter({ types: "domain.created" }), custom, 5)).toBe(false);
    expect(matchesChange(own, parseChangeFilter({ domains: "other.x" }), custom, 5)).toBe(false);
  });

  it("a settings change's event has no block and says so", () => {
    const w = toB(3, null);
    expect(w).toMatchObject({ sourceId: "settings", projectId: 3, payload: { cause: "settings" } });
    const m = toB(null, event("domain.created", b, {}));
    expect(m).toMatchObject({ sourceId: "s", blockNumber: 7, payload: { cause: "map" } });
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStore } from "../store/create-store.js";
import { createPostgresStore } from "../store/postgres/postgres-store.js";
import type { Store } from "../store/store.js";
import { ADDR, NOW, seedWorld, type WorldDomain } from "../../test/api/helpers/world.js";
import { createScoringRanker, type RankContext } from "./rank.js";
import { normalizeEnsName, normalizeName } from "../domain/names.js";
import { asciiFastPath, createResolution, lookupNames, type Resolution } from "./resolution.js";

const ctx: RankContext = { projectSettings: {}, country: null, now: NOW, explain: false };

describe("lookupNames", () => {
  it.each([
    ["alice.wallet", ["alice.wallet"]],
    ["  Alice.WALLET. ", ["alice.wallet"]],
    ["xn--caf-dma.eth", ["café.eth"]],
    // Full-width letters: the generic form keeps them, ENSIP-15 maps them to ASCII.
    ["ｂｏｂ.eth", ["ｂｏｂ.eth", "bob.eth"]],
    // ENSIP-15 allows `$`, the generic rule does not.
    ["$dollar.eth", ["$dollar.eth"]],
  ])("%j -> %j", (input, names) => {
    expect(lookupNames(input)).toEqual(names);
  });

  it.each([
    ["alice", "INVALID_DOMAIN", /second-level/],
    ["a..wallet", "INVALID_DOMAIN", /empty label/],
    ["al\u200bice.wallet", "INVALID_DOMAIN", /invisible/],
    ["\ufffd.eth", "INVALID_DOMAIN", /invalid UTF-8/],
    ["a/b.wallet", "INVALID_DOMAIN", /not allowed/],
    ["xn--zz.eth", "INVALID_DOMAIN", /punycode/],
    [`${"a".repeat(1025)}.eth`, "PARAMETER_TOO_LONG", /1024 bytes/],
    [`${"é".repeat(600)}.eth`, "PARAMETER_TOO_LONG", /1024 bytes/],
    [`${"a.".repeat(255)}eth`, "PARAMETER_TOO_LONG", /255 labels/],
  ])("%#: refuses with %s", (input, code, reason) => {
    let caught: unknown;
    try {
      lookupNames(input);
    } catch (e) {
      caught = e;
    }
    expect(caught).toMatchObject({ code });
    expect((caught as Error).message).toMatch(reason);
  });
});

describe("resolution over SQLite", () => {
  let dir: string;
  let store: Store;
  let resolution: Resolution;
  let ids: Map<string, number>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-resolution-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    ids = await seedWorld(store);
    resolution = createResolution({ store: store.domainMap, ranker: createScoringRanker() });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("resolve returns the first of deep-resolve", async () => {
    const deep = await resolution.deepResolve("alice.wallet", {}, ctx);
    expect(deep.map((r) => `${r.domain.provider}/${r.domain.network}`)).toEqual([
      "NAMESPACE_A/POLYGON",
      "NAMESPACE_B/ETHEREUM",
      "NAMESPACE_A/BSC",
    ]);
    expect((await resolution.resolve("alice.wallet", {}, ctx))?.domain.id).toBe(deep[0].domain.id);
  });

  it("finds an ENS name through its ENSIP-15 form", async () => {
    expect((await resolution.resolve("ｂｏｂ.eth", {}, ctx))?.domain.name).toBe("bob.eth");
  });

  it("reverse-resolve puts verified primary names first and drops a stale reverse record", async () => {
    const bob = await resolution.reverseResolve(ADDR.bob.toUpperCase().replace("0X", "0x"), {}, ctx);
    expect(bob.map((r) => r.domain.name)).toEqual(["bob.eth", "alice.wallet", "apple.crypto", "bob.crypto"]);
    // Carol's reverse record names sold.crypto, which Dave owns now.
    const carol = await resolution.reverseResolve(ADDR.carol, {}, ctx);
    expect(carol.map((r) => r.domain.name)).not.toContain("sold.crypto");
    expect(carol.map((r) => r.domain.id)).toContain(ids.get("cafe-ens"));
  });

  it("reverse-resolve refuses what is not an address", async () => {
    await expect(resolution.reverseResolve("0x1234", {}, ctx)).rejects.toMatchObject({
      code: "INVALID_ADDRESS",
    });
  });

  it("turns an unreachable store into STORE_UNAVAILABLE", async () => {
    const down = createPostgresStore("postgres://nobody@127.0.0.1:1/none");
    const r = createResolution({ store: down.domainMap, ranker: createScoringRanker() });
    await expect(r.resolve("alice.wallet", {}, ctx)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await expect(r.reverseResolve(ADDR.bob, {}, ctx)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    await down.close().catch(() => {});
  });
});

describe("asciiFastPath", () => {
  // The shortcut must agree with the full rules on every name it takes.
  it("returns exactly what both normalization rules return, for every name it accepts", () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const alphabet = "abcXYZ019-._";
    const inputs = [
      "a.b",
      "A.B",
      "xn--caf-dma.eth",
      "ab--c.eth",
      "-a.eth",
      "a-.eth",
      "1.2",
      "a.b.c.d",
      "a_b.eth",
    ];
    for (let i = 0; i < 5000; i++) {
      const len = 1 + Math.floor(rand() * 14);
      inputs.push(Array.from({ length: len }, () => alphabet[Math.floor(rand() * alphabet.length)]).join(""));
    }
    let taken = 0;
    for (const input of inputs) {
      const fast = asciiFastPath(input);
      if (fast === null) continue;
      taken++;
      const generic = normalizeName(input);
      const ens = normalizeEnsName(input);
      expect(generic.ok && generic.value.name, input).toBe(fast);
      expect(ens.ok && ens.value.name, input).toBe(fast);
    }
    expect(taken).toBeGreaterThan(200);
    expect(asciiFastPath("xn--caf-dma.eth")).toBeNull();
    expect(asciiFastPath("alice.wallet")).toBe("alice.wallet");
  });
});

describe("reverse-resolve forward verification of ENS primary names (ENSIP-3)", () => {
  let dir: string;
  let store: Store;
  let resolution: Resolution;
  const T = NOW - 86_400_000;
  const ens = (d: Partial<WorldDomain> & Pick<WorldDomain, "key" | "name" | "owner">): WorldDomain => ({
    provider: "NAMESPACE_C",
    network: "ETHEREUM",
    score: 10,
    registeredAt: T,
    ...d,
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-forward-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    await seedWorld(store, [
      // Dave owns it and named it his primary name, but its ETH address is Carol's: not verified.
      ens({
        key: "mine",
        name: "mine.eth",
        owner: ADDR.dave,
        records: { "token.ETH.0": ADDR.carol },
        reverseOf: ADDR.dave,
      }),
      {
        key: "top",
        provider: "NAMESPACE_A",
        network: "POLYGON",
        name: "aaa.wallet",
        owner: ADDR.dave,
        score: 90,
        registeredAt: T,
      },
      // Dave owns it, its ETH address is Bob's, and Bob made it his primary name: verified for Bob.
      ens({
        key: "shared",
        name: "shared.eth",
        owner: ADDR.dave,
        records: { "token.ETH.0": ADDR.bob },
        reverseOf: ADDR.bob,
      }),
    ]);
    resolution = createResolution({ store: store.domainMap, ranker: createScoringRanker() });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("does not put an owned ENS name first when its ETH address is another's", async () => {
    const dave = await resolution.reverseResolve(ADDR.dave, {}, ctx);
    expect(dave.map((r) => r.domain.name)).toEqual(["aaa.wallet", "mine.eth", "shared.eth"]);
  });

  it("answers an address with the ENS name whose ETH address it is and that names it, owned or not", async () => {
    const bob = await resolution.reverseResolve(ADDR.bob, {}, ctx);
    expect(bob.map((r) => `${r.domain.name} ${r.domain.owner}`)).toEqual([`shared.eth ${ADDR.dave}`]);
  });
});

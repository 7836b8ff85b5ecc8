// The winner.changed deriver run by several API processes on one PostgreSQL database: each page of
// the change log is derived once (the conditional advance of its cursor), whatever the race.
import { sql } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WinnerDeriver } from "../../src/workers/winner-deriver.js";
import type { ChangeEventWrite } from "../../src/domain/change-events.js";
import type { DomainWrite } from "../../src/domain/types.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { type ConsoleTestApp, createConsoleTestApp } from "../console/helpers/console-app.js";
import { until } from "../webhooks/receiver.js";

const TOKEN_B = `0x${"cd".repeat(32)}`;
const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";

describe.each(["postgres", "sqlite"] as const)(
  "winner.changed derived once across processes (%s)",
  (backend) => {
    let t: ConsoleTestApp;
    beforeAll(async () => {
      // The app runs a deriver of its own: three in all below.
      t = await createConsoleTestApp({ backend, webhooks: { pollMs: 20 } });
    });
    afterAll(async () => {
      await t?.close();
    });
    const options = () => ({
      store: t.store,
      ranker: createScoringRanker(),
      logger: pino({ level: "silent" }),
      clock: () => t.clock.now,
    });
    /** A map event of alice.wallet on NAMESPACE_B (fields overridden per test). */
    const mapEvent = (): ChangeEventWrite => ({
      type: "domain.created",
      createdAt: t.clock.now,
      sourceId: "uns-ethereum",
      network: "ETHEREUM",
      provider: "NAMESPACE_B",
      tokenId: TOKEN_B,
      name: "alice.wallet",
      tld: "wallet",
      blockNumber: 9,
      blockHash: `0x${"09".repeat(32)}`,
      txHash: null,
      blockTime: t.clock.now,
      retracts: null,
      projectId: null,
      payload: { state: { owner: OWNER, expiresAt: null, records: [] } },
    });
    /** Until the derivers' shared cursor is at the log's head (some deriver derived every page). */
    const derived = async () => {
      const { newest } = await t.store.changeLog.changeLogBounds();
      await until("the winner cursor at the log's head", async () => {
        const r = await sql<{ value: number | string }>`select value from change_log_state
          where key = 'winner_cursor'`.execute(t.store.accounts);
        return Number(r.rows[0]?.value ?? 0) >= newest;
      });
    };

    it("appends one winner.changed per scope for a new collision, however many derivers race", async () => {
      const custom = await t.store.projects.createProject({ name: `winner-${backend}`, plan: "internal" });
      await t.store.projects.updateProjectSettings(custom.id, {
        exceptions: [{ tld: "wallet", provider: "NAMESPACE_B" }],
      });
      const derivers = [1, 2].map(() => new WinnerDeriver(options()));
      // Both start from the head (the first start sets the shared cursor).
      await Promise.all(derivers.map((d) => d.tick()));
      const { newest } = await t.store.changeLog.changeLogBounds();

      // alice.wallet (seeded on NAMESPACE_A) gets a second holder on NAMESPACE_B.
      const now = t.clock.now;
      const domain: DomainWrite = {
        provider: "NAMESPACE_B",
        network: "ETHEREUM",
        tokenId: TOKEN_B,
        name: "alice.wallet",
        sld: "alice",
        tld: "wallet",
        owner: OWNER,
        contractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
        resolver: null,
        registeredAt: now - 1_000,
        registeredBlock: 9,
        expiresAt: null,
        lastUpdateBlock: 9,
        lastUpdateAt: now,
        baseScore: 10,
        spam: false,
        csamOk: true,
        kyc: false,
        tags: [],
      };
      await t.store.domainMap.upsertDomain(domain);
      const created = mapEvent();
      await t.store.changeLog.appendChangeEvents([created]);
      const appended = await Promise.all(derivers.map((d) => d.tick()));
      // On PostgreSQL a tick skips a page another deriver (the app's own) holds: wait for it.
      await derived();
      // Let the app's own deriver have its go too.
      await new Promise((r) => setTimeout(r, 300));

      const events = (await t.store.changeLog.findChangeEventsAfter(newest, 100)).filter(
        (e) => e.type === "winner.changed",
      );
      const mine = events.filter((e) => e.projectId === custom.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        name: "alice.wallet",
        sourceId: "uns-ethereum",
        blockNumber: 9,
        payload: {
          cause: "map",
          winner: {
            from: { provider: "NAMESPACE_A", network: "POLYGON" },
            to: { provider: "NAMESPACE_B", network: "ETHEREUM", tokenId: TOKEN_B },
          },
        },
      });
      // No scope twice: the shared (default) scope at most once (its winner may not have moved).
      const scopes = events.map((e) => e.projectId);
      expect(new Set(scopes).size).toBe(scopes.length);
      expect(appended.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(events.length);
      // Two holders arriving in one page, from two sources: the event is the second arrival's.
      const mark = (await t.store.changeLog.changeLogBounds()).newest;
      const TOKEN_C = `0x${"ce".repeat(32)}`;
      const TOKEN_D = `0x${"de".repeat(32)}`;
      const carol = (provider: "NAMESPACE_A" | "NAMESPACE_B", tokenId: string, block: number) =>
        t.store.domainMap.upsertDomain({
          ...domain,
          provider,
          network: provider === "NAMESPACE_A" ? "POLYGON" : "ETHEREUM",
          tokenId,
          name: "carol.wallet",
          sld: "carol",
          registeredBlock: block,
          lastUpdateBlock: block,
        });
      await carol("NAMESPACE_A", TOKEN_C, 20);
      await carol("NAMESPACE_B", TOKEN_D, 30);
      const fromFns = { sourceId: "fns-polygon", network: "POLYGON", provider: "NAMESPACE_A" } as const;
      await t.store.changeLog.appendChangeEvents([
        { ...created, ...fromFns, tokenId: TOKEN_C, name: "carol.wallet", blockNumber: 20 },
        { ...created, tokenId: TOKEN_D, name: "carol.wallet", blockNumber: 30 },
      ]);
      await Promise.all(derivers.map((d) => d.tick()));
      await derived();
      const carols = (await t.store.changeLog.findChangeEventsAfter(mark, 100)).filter(
        (e) => e.type === "winner.changed" && e.projectId === custom.id,
      );
      expect(carols.map((e) => [e.name, e.sourceId, e.blockNumber, e.payload.winner?.from?.tokenId])).toEqual(
        [["carol.wallet", "uns-ethereum", 30, TOKEN_C]],
      );

      await Promise.all(derivers.map((d) => d.stop()));
    });

    it.runIf(backend === "postgres")(
      "ranks each page in one process only: the others skip the locked cursor",
      async () => {
        let derived = 0;
        class Counting extends WinnerDeriver {
          override async derive(page: Parameters<WinnerDeriver["derive"]>[0]) {
            derived += page.length;
            return super.derive(page);
          }
        }
        const derivers = [1, 2, 3].map(() => new Counting(options()));
        // Settle the cursor at the head: the app's own deriver may still be reading.
        await Promise.all(derivers.map((d) => d.tick()));
        await new Promise((r) => setTimeout(r, 300));
        await Promise.all(derivers.map((d) => d.tick()));
        derived = 0;
        const events = Array.from({ length: 40 }, (_, i) => ({
          ...mapEvent(),
          type: "domain.updated" as const,
          tokenId: `0x${i.toString(16).padStart(64, "0")}`,
          name: `lone${i}.wallet`,
          blockNumber: 100 + i,
        }));
        await t.store.changeLog.appendChangeEvents(events);
        // Three at once (the app's own deriver may take the page first: then these see none).
        await Promise.all(derivers.map((d) => d.tick()));
        expect(derived).toBeLessThanOrEqual(events.length);
        await Promise.all(derivers.map((d) => d.stop()));
      },
    );
  },
);

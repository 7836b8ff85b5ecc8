import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangeEventWrite } from "../../src/domain/change-events.js";
import { createPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createTestDatabase } from "../helpers/pg.js";

const HASH = `0x${"cd".repeat(32)}`;
const event = (name: string): ChangeEventWrite => ({
  type: "domain.created",
  createdAt: Date.now(),
  sourceId: "fns-polygon",
  network: "POLYGON",
  provider: "NAMESPACE_A",
  tokenId: HASH,
  name,
  tld: "order",
  blockNumber: 1,
  blockHash: HASH,
  txHash: HASH,
  blockTime: null,
  retracts: null,
  projectId: null,
  payload: {},
});

/**
 * A reader that has seen id N must never see a smaller id commit later, or a feed client resuming
 * from N would miss it: on PostgreSQL ids are handed out at insert time, so two writers could commit
 * out of id order. The append's advisory lock makes the second writer wait for the first's commit.
 */
describe("the change log's ids follow commit order on PostgreSQL", () => {
  let db: { url: string; drop: () => Promise<void> };
  let store: PostgresStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = createPostgresStore(db.url);
    await store.migrate();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it("makes a second writer wait for the first's commit, so a smaller id never commits after a larger one", async () => {
    let releaseA!: () => void;
    const holdA = new Promise<void>((r) => {
      releaseA = r;
    });
    let aAppended!: () => void;
    const appended = new Promise<void>((r) => {
      aAppended = r;
    });
    const a = store.transaction(async (tx) => {
      await tx.changeLog.appendChangeEvents([event("a.order")]);
      aAppended();
      await holdA; // A is slow to commit (a large crawler batch)
    });
    await appended;
    let bDone = false;
    const b = store
      .transaction(async (tx) => {
        await tx.changeLog.appendChangeEvents([event("b.order")]);
      })
      .then(() => {
        bDone = true;
      });
    await new Promise((r) => setTimeout(r, 300));
    // B waits on A's lock: nothing is visible yet, and B has not committed ahead of A.
    expect(bDone).toBe(false);
    expect(await store.changeLog.findChangeEventsAfter(0, 10)).toEqual([]);
    releaseA();
    await Promise.all([a, b]);
    const all = await store.changeLog.findChangeEventsAfter(0, 10);
    expect(all.map((e) => e.name)).toEqual(["a.order", "b.order"]);
    expect(all[0].id).toBeLessThan(all[1].id);
  });
});

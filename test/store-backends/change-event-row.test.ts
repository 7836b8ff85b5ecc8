import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChangeEventWrite } from "../../src/domain/change-events.js";
import {
  CHANGE_EVENT_COLUMNS,
  changeEventRow,
  pushChangeEvent,
} from "../../src/store/kysely/change-log.queries.js";
import type { KyselyBacked } from "../helpers/raw-db.js";
import { STORE_BACKENDS } from "../helpers/store-world.js";

/** Every column holds a value no other column holds, so a misaligned column shows. */
const event = (n: number): ChangeEventWrite => ({
  type: "domain.updated",
  createdAt: 1_700_000_000_000 + n,
  sourceId: "uns-polygon",
  network: "POLYGON",
  provider: "NAMESPACE_B",
  tokenId: `0x${"ab".repeat(31)}${n.toString(16).padStart(2, "0")}`,
  name: `name${n}\u0000.wallet`,
  tld: "wallet",
  blockNumber: 1_000 + n,
  blockHash: `0x${"cd".repeat(32)}`,
  txHash: `0x${"ef".repeat(32)}`,
  blockTime: 1_600_000_000 + n,
  retracts: 40 + n,
  projectId: 7,
  payload: { owner: { from: null, to: `0x${"12".repeat(20)}` } },
});

describe("a change event's row", () => {
  it("holds the values the bulk path binds, column by column", () => {
    const e = event(3);
    const values: unknown[] = [];
    pushChangeEvent(values, e);
    const row = changeEventRow(e) as Record<string, unknown>;
    expect(values).toHaveLength(CHANGE_EVENT_COLUMNS.length);
    expect(CHANGE_EVENT_COLUMNS.map((c) => row[c])).toEqual(values);
    expect(row.name).toBe("name3\ufffd.wallet"); // NUL is not text on PostgreSQL
    expect(row.block_number).toBe(1_003);
    expect(row.retracts).toBe(43);
  });
});

describe.each(STORE_BACKENDS)("change events on $name", ({ open }) => {
  let opened: Awaited<ReturnType<(typeof STORE_BACKENDS)[number]["open"]>>;
  beforeAll(async () => {
    opened = await open();
  });
  afterAll(async () => {
    await opened?.cleanup();
  });

  it("names every column of the change_events table but its id, once", async () => {
    const tables = await (opened.store as unknown as KyselyBacked).db.introspection.getTables();
    const columns = (tables.find((t) => t.name === "change_events")?.columns ?? [])
      .map((c) => c.name)
      .filter((c) => c !== "id");
    expect(columns.length).toBeGreaterThan(0);
    expect([...CHANGE_EVENT_COLUMNS].sort()).toEqual(columns.sort());
    expect(new Set(CHANGE_EVENT_COLUMNS).size).toBe(CHANGE_EVENT_COLUMNS.length);
  });

  it("reads back the same through the crawler's bulk statements as written", async () => {
    // SQLite: 64 rows take the multi-row statement, the 65th the single-row one; PostgreSQL: one
    // `unnest` statement of every column's array.
    const written = Array.from({ length: 65 }, (_, i) => event(i));
    await opened.store.transaction(async (tx) => tx.changeLog.appendChangeEvents(written));
    const read = await opened.store.changeLog.findChangeEventsAfter(0, 100);
    expect(read).toHaveLength(65);
    for (const [i, r] of read.entries()) {
      const { id: _id, ...rest } = r;
      expect(rest).toEqual({ ...written[i], name: written[i].name.replace("\u0000", "\ufffd") });
    }
  });
});

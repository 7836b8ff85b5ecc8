import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { withStatementCache } from "./sqlite-statement-cache.js";

describe("withStatementCache", () => {
  it("prepares a SQL text once, keeps a bounded number, and never hands out a busy statement", () => {
    const db = new BetterSqlite3(":memory:");
    db.exec("create table t (x integer); insert into t values (1), (2), (3)");
    let prepared = 0;
    const counting = new Proxy(db, {
      get(target, prop) {
        if (prop === "prepare")
          return (sql: string) => {
            prepared++;
            return target.prepare(sql);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const cached = withStatementCache(counting, 2);
    const select = "select x from t order by x";
    expect(cached.prepare(select).all()).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
    expect(cached.prepare(select).all()).toHaveLength(3);
    expect(prepared).toBe(1);
    // Busy (an iteration under way): the same text gets a statement of its own.
    const it = cached.prepare(select).iterate();
    it.next();
    expect(cached.prepare(select).all()).toHaveLength(3);
    expect(prepared).toBe(2);
    it.return?.();
    // Past the bound, the least recently used is dropped and prepared again when asked.
    cached.prepare("select 1");
    cached.prepare("select 2");
    cached.prepare(select);
    expect(prepared).toBe(5);
    cached.close();
    expect(db.open).toBe(false);
  });
});

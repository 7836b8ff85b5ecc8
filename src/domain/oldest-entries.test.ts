import { describe, expect, it } from "vitest";
import { OldestEntries } from "./oldest-entries.js";

describe("OldestEntries", () => {
  it("drops in insertion order, a re-set entry counting from its new place (LRU)", () => {
    const m = new Map<string, number>([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    const oldest = new OldestEntries(m);
    expect(oldest.drop()).toEqual(["a", 1]);
    // A hit: b moves to the end.
    m.delete("b");
    m.set("b", 2);
    m.set("d", 4);
    expect(oldest.drop()).toEqual(["c", 3]);
    expect(oldest.drop()).toEqual(["b", 2]);
    expect(oldest.drop()).toEqual(["d", 4]);
    expect(oldest.drop()).toBeUndefined();
    expect(m.size).toBe(0);
  });

  it("goes on after the map was emptied, cleared or its iterator finished", () => {
    const m = new Map<number, number>();
    const oldest = new OldestEntries(m);
    expect(oldest.drop()).toBeUndefined();
    m.set(1, 1);
    expect(oldest.drop()).toEqual([1, 1]);
    m.set(2, 2).set(3, 3);
    m.clear();
    m.set(4, 4).set(5, 5);
    expect(oldest.drop()).toEqual([4, 4]);
    m.delete(5);
    m.set(6, 6);
    expect(oldest.drop()).toEqual([6, 6]);
  });

  it("keeps the same order as a new iterator would, over a long random mix (the model)", () => {
    const m = new Map<number, number>();
    const oldest = new OldestEntries(m);
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 20_000; i++) {
      const op = rand(4);
      if (op === 0 && m.size > 0) {
        const expected = m.entries().next().value;
        expect(oldest.drop()).toEqual(expected);
      } else if (op === 1) {
        const k = rand(500);
        const v = m.get(k);
        if (v !== undefined) {
          m.delete(k);
          m.set(k, v);
        }
      } else if (op === 2) m.delete(rand(500));
      else m.set(rand(500), i);
    }
  });
});
